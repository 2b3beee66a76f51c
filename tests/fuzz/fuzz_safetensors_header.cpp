// Fuzz target: parseSafetensors on a whole file's bytes (u64 length, JSON header, data section).
// Whatever it accepts must be safe to use: every tensor's bytes are read, and float tensors are
// widened to fp32, so a view pointing outside the input is a sanitizer report, not a silent pass.
#include "engine/safetensors_file.h"

#include <cstddef>
#include <cstdint>
#include <vector>

int brookFuzzSafetensorsHeader(const uint8_t* data, size_t size)
{
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    auto contents = brook::parseSafetensors(bytes, "fuzz/model.safetensors");
    if (!contents) return 0;
    unsigned checksum = 0;
    for (const auto& [name, view] : contents->tensors) {
        for (size_t i = 0; i < view.numBytes; ++i) checksum += std::to_integer<unsigned>(view.data[i]);
        if (brook::isFloatDType(view.dtype)) {
            std::vector<float> widened(size_t(view.numElements()));
            brook::convertToFloat32(view, widened.data());
        }
    }
    static volatile unsigned sink;  // keeps the reads
    sink = sink + checksum;
    return 0;
}
