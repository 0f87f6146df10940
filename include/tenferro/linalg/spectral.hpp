#pragma once
// (filled by the spectral part of the linalg family)

#include "tenferro/linalg/triangular.hpp"
