#include "engine/serving_settings.h"

namespace brook {

Result<DeviceChoice> parseDeviceChoice(const std::string& device)
{
    if (device == "auto") return DeviceChoice::Auto;
    if (device == "cpu") return DeviceChoice::Cpu;
    if (device == "cuda") return DeviceChoice::Cuda;
    return makeError(ErrorCode::InvalidArgument, "device", "unknown device '" + device + "' (use auto, cpu or cuda)");
}

const char* dtypeChoiceName(DTypeChoice dtype)
{
    switch (dtype) {
    case DTypeChoice::Auto: return "auto";
    case DTypeChoice::BFloat16: return "bfloat16";
    case DTypeChoice::Float16: return "float16";
    case DTypeChoice::Float32: return "float32";
    }
    return "auto";
}

Result<DTypeChoice> parseDTypeChoice(const std::string& dtype)
{
    if (dtype == "auto") return DTypeChoice::Auto;
    if (dtype == "bfloat16" || dtype == "bf16") return DTypeChoice::BFloat16;
    if (dtype == "float16" || dtype == "half" || dtype == "fp16") return DTypeChoice::Float16;
    if (dtype == "float32" || dtype == "float" || dtype == "fp32") return DTypeChoice::Float32;
    return makeError(ErrorCode::InvalidArgument, "dtype",
                     "unknown dtype '" + dtype + "' (use auto, bfloat16, float16 or float32)");
}

Result<SchedulingPolicy> parseSchedulingPolicy(const std::string& policy)
{
    if (policy == "fcfs") return SchedulingPolicy::Fcfs;
    if (policy == "priority") return SchedulingPolicy::Priority;
    return makeError(ErrorCode::InvalidArgument, "scheduling_policy",
                     "unknown scheduling policy '" + policy + "' (use fcfs or priority)");
}

}  // namespace brook
