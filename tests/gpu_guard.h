// KTUNE_REQUIRE_GPU(): first line of every [gpu] test. Without a usable GPU it reports the
// skip visibly (a Catch2 warning naming the reason) and leaves the test case.
#pragma once

#include <catch2/catch.hpp>

#include "ktune/device.h"
#include "skip.h"

/// Skips the enclosing test case, with a visible message, when no CUDA device is usable.
#define KTUNE_REQUIRE_GPU()                                                   \
  do {                                                                        \
    if (auto ktune_why_ = ::ktune::cuda_unavailable_reason())                 \
      KTUNE_SKIP("no GPU: " << *ktune_why_);                                  \
  } while (0)
