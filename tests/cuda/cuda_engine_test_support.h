// Shared by the CUDA engine-level tests: the engine tests' tiny model with a head_dim the CUDA
// attention kernels take (the tiny shape has 16; the kernels take 32, 64 or 128).
#pragma once

#include "../engine/engine_test_support.h"

#include <QTemporaryDir>

#include <filesystem>

namespace brook::cudatest {

inline const std::filesystem::path& gpuModelDir()
{
    static QTemporaryDir dir;
    static const std::filesystem::path path = [] {
        testing::TestModelOptions options;
        options.shape = testing::TestModelShape::tiny();
        options.shape.headDim = 32;
        return testsupport::writeModelInto(dir, options);
    }();
    return path;
}

}  // namespace brook::cudatest
