#pragma once
// (filled by the factor part of the linalg family)

#include "tenferro/linalg/triangular.hpp"
