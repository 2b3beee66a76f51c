#include "engine/cpu/weight_prefetch.h"

#include <algorithm>
#include <atomic>

namespace brook::cpu {

namespace {
std::atomic<bool> prefetchOn{true};
}  // namespace

bool weightPrefetch() { return prefetchOn.load(std::memory_order_relaxed); }

void setWeightPrefetch(bool on) { prefetchOn.store(on); }

size_t fastestOption(size_t options, int rounds, const std::function<double(size_t)>& time,
                     std::vector<double>* medians)
{
    if (medians) medians->clear();
    if (options == 0 || rounds <= 0) return 0;
    std::vector<std::vector<double>> seconds(options);
    for (int r = 0; r < rounds; ++r)
        for (size_t o = 0; o < options; ++o) seconds[o].push_back(time(o));
    size_t best = 0;
    double bestMedian = 0.0;
    for (size_t o = 0; o < options; ++o) {
        std::vector<double>& s = seconds[o];
        std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
        const double median = s[s.size() / 2];
        if (medians) medians->push_back(median);
        if (o == 0 || median < bestMedian) {
            best = o;
            bestMedian = median;
        }
    }
    return best;
}

}  // namespace brook::cpu
