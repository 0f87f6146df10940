#pragma once
// (filled by the composite part of the linalg family)

#include "tenferro/linalg/triangular.hpp"
