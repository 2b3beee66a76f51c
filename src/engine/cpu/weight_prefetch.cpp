#include "engine/cpu/weight_prefetch.h"

#include <algorithm>
#include <atomic>
#include <vector>

namespace brook::cpu {

namespace {
std::atomic<int> prefetchBytes{kWeightPrefetchBytes};
}  // namespace

int weightPrefetchBytes() { return prefetchBytes.load(std::memory_order_relaxed); }

void setWeightPrefetch(bool on) { prefetchBytes.store(on ? kWeightPrefetchBytes : 0); }

int fastestCandidate(std::span<const int> candidates, int rounds, const std::function<double(int)>& time,
                     std::vector<double>* medians)
{
    if (medians) medians->clear();
    if (candidates.empty()) return 0;
    std::vector<std::vector<double>> seconds(candidates.size());
    for (int r = 0; r < rounds; ++r)
        for (size_t c = 0; c < candidates.size(); ++c) seconds[c].push_back(time(candidates[c]));
    size_t best = 0;
    double bestMedian = 0.0;
    for (size_t c = 0; c < candidates.size(); ++c) {
        std::vector<double>& s = seconds[c];
        if (s.empty()) return candidates.front();
        std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
        const double median = s[s.size() / 2];
        if (medians) medians->push_back(median);
        if (c == 0 || median < bestMedian) {
            best = c;
            bestMedian = median;
        }
    }
    return candidates[best];
}

}  // namespace brook::cpu
