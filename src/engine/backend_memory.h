// BackendMemory: what a backend's memory holds, as the engine's stats report it to front ends
// (dashboards, the capacity planner's "measured" column). Plain data; part of the public API.
#pragma once

#include <cstdint>

namespace brook {

struct BackendMemory {
    int64_t weightsBytes = 0;
    int64_t kvCacheBytes = 0;
    int64_t activationsBytes = 0;  // workspace, graphs
    int64_t deviceTotalBytes = 0;  // 0 when not known (CPU)
    int64_t deviceFreeBytes = 0;
};

}  // namespace brook
