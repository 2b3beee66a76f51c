#include "server/api_error.h"

namespace brook {

nlohmann::ordered_json ApiError::toJson() const
{
    nlohmann::ordered_json error = {
        {"message", message},
        {"type", type},
        {"param", param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(param)},
        {"code", code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(code)}};
    return {{"error", error}};
}

std::string ApiError::body() const { return dumpJson(toJson()); }

ApiError ApiError::badRequest(std::string message, std::string param)
{
    return {400, std::move(message), "invalid_request_error", std::move(param), {}};
}

ApiError ApiError::unauthorized()
{
    return {401,
            "Incorrect or missing API key. Send it as 'Authorization: Bearer <key>'.",
            "invalid_request_error",
            {},
            "invalid_api_key"};
}

ApiError ApiError::notFound(std::string message, std::string code)
{
    return {404, std::move(message), "invalid_request_error", {}, std::move(code)};
}

ApiError ApiError::modelNotFound(const std::string& model)
{
    return {404, "The model `" + model + "` does not exist.", "invalid_request_error", "model", "model_not_found"};
}

ApiError ApiError::payloadTooLarge(size_t limitBytes)
{
    return {413,
            "The request body is larger than the server's limit of " + std::to_string(limitBytes) + " bytes.",
            "invalid_request_error",
            {},
            "request_too_large"};
}

ApiError ApiError::queueFull(std::string message) { return {429, std::move(message), "server_busy", {}, "queue_full"}; }

ApiError ApiError::unavailable(std::string message) { return {503, std::move(message), "server_unavailable", {}, {}}; }

ApiError ApiError::timeout(std::string message)
{
    return {408, std::move(message), "timeout_error", {}, "request_timeout"};
}

ApiError ApiError::internal(std::string message) { return {500, std::move(message), "internal_server_error", {}, {}}; }

ApiError ApiError::forbidden(std::string message, std::string code)
{
    return {403, std::move(message), "invalid_request_error", {}, std::move(code)};
}

ApiError ApiError::methodNotAllowed(const std::string& method, const std::string& path)
{
    return {405, "Method Not Allowed: " + method + " " + path, "invalid_request_error", {}, "method_not_allowed"};
}

std::string dumpJson(const nlohmann::json& value)
{
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string dumpJson(const nlohmann::ordered_json& value)
{
    return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace brook
