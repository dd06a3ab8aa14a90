// The template registry: a template registered under a built-in's name replaces it, whether
// it is registered before or after the first lookup (ctest runs each case in its own process,
// so there this case registers before the built-ins were ever loaded).
#include <catch2/catch.hpp>

#include "builtin_templates.h"
#include "ktune/error.h"
#include "ktune/template.h"

using namespace ktune;

namespace {

/// The built-in copy template under another description.
class RenamedCopy final : public KernelTemplate {
 public:
  explicit RenamedCopy(std::shared_ptr<KernelTemplate> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::string op() const override { return inner_->op(); }
  std::string description() const override { return "the user's own copy"; }
  const std::string& source() const override { return inner_->source(); }
  std::vector<std::string> dim_names() const override { return inner_->dim_names(); }
  std::map<std::string, std::vector<std::string>> attr_domains() const override {
    return inner_->attr_domains();
  }
  Problem example_problem() const override { return inner_->example_problem(); }
  SearchSpace space(const Problem& p, const Device& d) const override { return inner_->space(p, d); }
  LaunchPlan launch(const Problem& p, const Config& c, const Device& d) const override {
    return inner_->launch(p, c, d);
  }
  std::unique_ptr<Workload> workload(const Problem& p) const override { return inner_->workload(p); }

 private:
  std::shared_ptr<KernelTemplate> inner_;
};

}  // namespace

TEST_CASE("registry: a template of a built-in's name replaces it, registered first or later",
          "[registry]") {
  register_template(std::make_shared<RenamedCopy>(make_copy_template()));
  CHECK(find_template("copy")->description() == "the user's own copy");
  CHECK(find_template("gemm_mma")->name() == "gemm_mma");  // the other built-ins are there
  int copies = 0;
  for (const auto& t : all_templates()) copies += t->name() == "copy";
  CHECK(copies == 1);
  register_template(make_copy_template());  // the built-in again, for later cases in this process
  CHECK(find_template("copy")->description() != "the user's own copy");
  CHECK_THROWS_AS(register_template(nullptr), Error);
}
