// FieldReader: typed, optional fields of a JSON request object, with errors that name the field
// the way the client spelled it ("'top_p' must be a number, got a string"). A field set to null
// counts as absent, as in OpenAI's API. Stateless apart from the object it reads.
#pragma once

#include "server/api_error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace brook {

class FieldReader {
public:
    // `path` prefixes field names in messages ("messages[2]." for nested objects).
    explicit FieldReader(const nlohmann::json& object, std::string path = {})
        : m_object(object), m_path(std::move(path))
    {}

    bool has(const char* key) const;                   // present and not null
    const nlohmann::json* get(const char* key) const;  // nullptr when absent or null
    std::string name(const char* key) const { return m_path + key; }

    // Each leaves `out` untouched when the field is absent and returns an error on a wrong type.
    std::optional<ApiError> readFloat(const char* key, float& out) const;
    std::optional<ApiError> readInt(const char* key, int64_t& out) const;  // integral floats accepted
    std::optional<ApiError> readInt(const char* key, int& out) const;      // and within int's range
    std::optional<ApiError> readBool(const char* key, bool& out) const;
    std::optional<ApiError> readString(const char* key, std::string& out) const;
    // A string or a list of strings (OpenAI's `stop`).
    std::optional<ApiError> readStringOrList(const char* key, std::vector<std::string>& out) const;
    std::optional<ApiError> readIntList(const char* key, std::vector<int32_t>& out) const;

    ApiError wrongType(const char* key, const char* expected) const;
    static const char* typeName(const nlohmann::json& value);

private:
    const nlohmann::json& m_object;
    std::string m_path;
};

}  // namespace brook
