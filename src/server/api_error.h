// ApiError: a request failure as OpenAI's API reports it: an HTTP status plus
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// so the official SDKs raise their typed errors (BadRequestError, AuthenticationError, ...).
// Messages name the field at fault; `param` carries its JSON path ("messages[1].content").
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace brook {

struct ApiError {
    int status = 400;
    std::string message;
    std::string type = "invalid_request_error";
    std::string param;  // empty: null
    std::string code;   // empty: null

    nlohmann::ordered_json toJson() const;
    std::string body() const;  // toJson() serialized

    static ApiError badRequest(std::string message, std::string param = {});
    static ApiError unauthorized();
    static ApiError notFound(std::string message, std::string code = {});
    static ApiError modelNotFound(const std::string& model);
    static ApiError payloadTooLarge(size_t limitBytes);
    static ApiError queueFull(std::string message);
    static ApiError unavailable(std::string message);
    static ApiError timeout(std::string message);
    static ApiError internal(std::string message);
    static ApiError forbidden(std::string message, std::string code = {});
    static ApiError methodNotAllowed(const std::string& method, const std::string& path);
};

// JSON text for the wire: invalid UTF-8 (a token that ends mid-character) is replaced, never thrown on.
std::string dumpJson(const nlohmann::json& value);
std::string dumpJson(const nlohmann::ordered_json& value);

}  // namespace brook
