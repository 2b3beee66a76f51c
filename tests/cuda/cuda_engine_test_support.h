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
    static bool written = [] {
        testing::TestModelOptions options;
        options.shape = testing::TestModelShape::tiny();
        options.shape.headDim = 32;
        auto r = testing::writeTestModel(dir.path().toStdString(), options);
        if (!r) qFatal("writeTestModel: %s", r.error().c_str());
        return true;
    }();
    (void)written;
    static std::filesystem::path path = dir.path().toStdString();
    return path;
}

}  // namespace brook::cudatest
