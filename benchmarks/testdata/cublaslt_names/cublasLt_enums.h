/* The two cublasLt.h enums cublaslt_names.py reads, cut down for the test. */
typedef enum { CUBLASLT_MATMUL_TILE_UNDEFINED = 0, CUBLASLT_MATMUL_TILE_128x256 = 23 } cublasLtMatmulTile_t;
typedef enum { CUBLASLT_MATMUL_STAGES_UNDEFINED = 0, CUBLASLT_MATMUL_STAGES_64x3 = 8 } cublasLtMatmulStages_t;
