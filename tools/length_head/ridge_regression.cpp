#include "tools/length_head/ridge_regression.h"

#include <limits>

#include "baton/error.h"

namespace baton {

RidgeRegression RidgeRegression::fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                     double penalty) {
  RidgeRegression r;
  r.penalty_ = penalty;
  r.mean_ = x.colwise().mean().transpose();
  const Eigen::MatrixXd centered = x.rowwise() - r.mean_.transpose();
  // A constant feature has no spread to divide by; it scales by 1 and, centered, weighs nothing.
  r.scale_ = (centered.colwise().squaredNorm() / static_cast<double>(x.rows()))
                 .cwiseSqrt()
                 .transpose()
                 .unaryExpr([](double s) { return s > 1e-12 ? s : 1.0; });
  const Eigen::MatrixXd z = centered * r.scale_.cwiseInverse().asDiagonal();
  r.bias_ = y.mean();
  const Eigen::VectorXd target = y.array() - r.bias_;
  // With more features than samples (a hidden state of thousands for hundreds of requests) the
  // dual form solves the smaller system: w = zᵀ (z zᵀ + λI)⁻¹ y.
  const double lambda = penalty * static_cast<double>(x.rows());
  if (z.cols() <= z.rows()) {
    Eigen::MatrixXd gram = z.transpose() * z;
    gram.diagonal().array() += lambda;
    r.weights_ = gram.ldlt().solve(z.transpose() * target);
  } else {
    Eigen::MatrixXd gram = z * z.transpose();
    gram.diagonal().array() += lambda;
    r.weights_ = z.transpose() * gram.ldlt().solve(target);
  }
  return r;
}

RidgeRegression RidgeRegression::fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                     std::span<const double> penalties, int folds) {
  const Eigen::Index n = x.rows();
  if (n < 2 * folds || penalties.empty() || folds < 2) {
    throw Error(ErrorCategory::kInvalidArgument,
                "ridge regression needs at least " + std::to_string(2 * folds) +
                    " samples and a penalty to try; got " + std::to_string(n));
  }
  double best_error = std::numeric_limits<double>::infinity(), best_penalty = penalties[0];
  for (const double penalty : penalties) {
    double error = 0;
    for (int f = 0; f < folds; ++f) {
      const Eigen::Index begin = n * f / folds, end = n * (f + 1) / folds;
      Eigen::MatrixXd train_x(n - (end - begin), x.cols());
      Eigen::VectorXd train_y(train_x.rows());
      train_x << x.topRows(begin), x.bottomRows(n - end);
      train_y << y.head(begin), y.tail(n - end);
      const RidgeRegression r = fit(train_x, train_y, penalty);
      for (Eigen::Index i = begin; i < end; ++i) {
        const double miss = r.predict(x.row(i).transpose()) - y(i);
        error += miss * miss;
      }
    }
    if (error < best_error) best_error = error, best_penalty = penalty;
  }
  return fit(x, y, best_penalty);
}

double RidgeRegression::predict(const Eigen::VectorXd& features) const {
  return bias_ + weights_.dot((features - mean_).cwiseQuotient(scale_));
}

}  // namespace baton
