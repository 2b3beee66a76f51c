// A paged KV cache of random keys and values for attention tests: `keys` written slots of one
// sequence in shuffled blocks (as a long-running cache has them), the same keys as rows (the
// reference's layout) and as the CPU backend's K tiles, and the rest of the last block NaN, as
// slots no step has written may hold anything.
#pragma once

#include "engine/cpu/cpu_ops.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace brook::testsupport {

struct RandomPagedCache {
    int blockSize = 0, kvHeads = 0, headDim = 0;
    std::vector<float> kRows, kTiles, v;  // [slot][KVH][HD], [block][KVH][HD][blockSize], [slot][KVH][HD]
    std::vector<int32_t> table;           // the sequence's block table

    RandomPagedCache(int blockSize_, int keys, int kvHeads_, int headDim_, std::mt19937& rng)
        : blockSize(blockSize_), kvHeads(kvHeads_), headDim(headDim_)
    {
        const int blocks = (keys + blockSize - 1) / blockSize;
        const size_t numSlots = size_t(blocks) * blockSize, rowFloats = size_t(kvHeads) * headDim;
        std::normal_distribution<float> dist(0.0f, 1.0f);
        kRows.resize(numSlots * rowFloats);
        v.resize(numSlots * rowFloats);
        for (auto* values : {&kRows, &v})
            for (float& f : *values) f = dist(rng);
        table.resize(size_t(blocks));
        std::iota(table.begin(), table.end(), 0);
        std::shuffle(table.begin(), table.end(), rng);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (size_t slot = size_t(keys); slot < numSlots; ++slot) {
            const size_t physical = size_t(table[slot / size_t(blockSize)]) * blockSize + slot % size_t(blockSize);
            std::fill_n(&kRows[physical * rowFloats], rowFloats, nan);
            std::fill_n(&v[physical * rowFloats], rowFloats, nan);
        }
        kTiles.resize(kRows.size());
        for (size_t slot = 0; slot < numSlots; ++slot)
            for (size_t e = 0; e < rowFloats; ++e)
                kTiles[(slot / blockSize * rowFloats + e) * blockSize + slot % blockSize] = kRows[slot * rowFloats + e];
    }

    cpu::PagedKv rows() const
    {
        return {kRows.data(), v.data(), blockSize, kvHeads, headDim, cpu::PagedKv::KeyLayout::Rows};
    }
    cpu::PagedKv tiles() const
    {
        return {kTiles.data(), v.data(), blockSize, kvHeads, headDim, cpu::PagedKv::KeyLayout::Tiles};
    }
};

}  // namespace brook::testsupport
