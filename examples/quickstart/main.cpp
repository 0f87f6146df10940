#include <iostream>
#include "tenferro/tenferro.hpp"
int main() {
  std::cout << tenferro::eye(2) << "\n";
}
