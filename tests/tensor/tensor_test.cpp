#include "test_util.hpp"

using namespace tenferro;

TEST(Tensor, FromColAndRowMajor) {
  auto a = Tensor::from_col_major({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  TypedTensor<double> ta(a);
  EXPECT_EQ(ta(0, 1), 3.0);
  EXPECT_EQ(ta(1, 2), 6.0);
  auto b = Tensor::from_row_major({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
  TypedTensor<double> tb(b);
  EXPECT_EQ(tb(0, 1), 2.0);
  EXPECT_EQ(tb(1, 0), 4.0);
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}
