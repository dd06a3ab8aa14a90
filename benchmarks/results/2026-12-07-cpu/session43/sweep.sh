#!/bin/bash
# The five benchmark_hub spaces with one bayesian option set. usage: sweep.sh options repeats first_seed
here=$(dirname "$0")
for ds in convolution_milo_A4000 convolution_milo_A6000 convolution_milo_W7800 dedispersion_milo_A6000 dedispersion_milo_MI250X; do
  "$here/run.sh" $ds "$1" $2 $3
done
