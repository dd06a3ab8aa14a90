# ktune::nvrtc: the NVRTC library alone. FindCUDAToolkit's CUDA::nvrtc also links
# CUDA::cuda_driver (libcuda.so), which ktune never calls directly; where the linker keeps
# every library it is given (no --as-needed: some toolchains, sanitizer builds), that would
# make every ktune program and every program linking ktune::ktune need libcuda.so.1 and fail
# to start on a machine without a GPU driver. Included by the build and by ktuneConfig.cmake,
# after find_package(CUDAToolkit).
if(NOT TARGET ktune::nvrtc)
  get_target_property(_ktune_nvrtc_location CUDA::nvrtc IMPORTED_LOCATION)
  if(NOT _ktune_nvrtc_location)
    get_target_property(_ktune_nvrtc_location CUDA::nvrtc IMPORTED_LOCATION_RELEASE)
  endif()
  if(NOT _ktune_nvrtc_location)
    message(FATAL_ERROR "ktune: cannot find the NVRTC library of CUDA::nvrtc")
  endif()
  add_library(ktune::nvrtc INTERFACE IMPORTED)
  set_target_properties(ktune::nvrtc PROPERTIES
    INTERFACE_LINK_LIBRARIES "${_ktune_nvrtc_location}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
  unset(_ktune_nvrtc_location)
endif()
