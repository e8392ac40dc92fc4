#pragma once

// Ridge regression, the "small regression head" of a length predictor: y ≈ w · x + b, fitted in
// closed form on standardized features, its penalty chosen by cross-validation.

#include <Eigen/Dense>

#include <span>

namespace baton {

class RidgeRegression {
 public:
  // Rows of `x` are samples. The penalty is the one of `penalties` (relative to the sample
  // count) with the least squared error over `folds` contiguous folds of the samples.
  static RidgeRegression fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                             std::span<const double> penalties, int folds);
  // At one given penalty.
  static RidgeRegression fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, double penalty);
  double predict(const Eigen::VectorXd& features) const;
  double penalty() const { return penalty_; }
  // The fit in the features' own units: predict(x) = weights · x + bias.
  Eigen::VectorXd weights() const { return weights_.cwiseQuotient(scale_); }
  double bias() const { return bias_ - weights().dot(mean_); }

 private:
  Eigen::VectorXd mean_, scale_, weights_;
  double bias_ = 0, penalty_ = 0;
};

}  // namespace baton
