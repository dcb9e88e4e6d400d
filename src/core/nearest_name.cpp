// The nearest known name to a mistyped one (nearest_name.hpp).

#include <pacer/core/nearest_name.hpp>

#include <algorithm>

namespace pacer {

std::size_t typo_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min(
                {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::string nearest_name(const std::vector<std::string>& names, const std::string& typed) {
    std::string best;
    std::size_t best_distance = 0;
    for (const auto& name : names) {
        const std::size_t d = typo_distance(typed, name);
        if (best.empty() || d < best_distance) {
            best = name;
            best_distance = d;
        }
    }
    if (best.empty() || best_distance > 2 ||
        best_distance * 2 > std::max<std::size_t>(typed.size(), 2))
        return {};
    return best;
}

} // namespace pacer
