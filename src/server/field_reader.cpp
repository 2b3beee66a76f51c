#include "server/field_reader.h"

#include <cmath>
#include <limits>

namespace brook {

namespace {
// 'name', built by appending: GCC 12 warns (wrongly, -Wrestrict) on "'" + std::string&&.
std::string quote(const std::string& name)
{
    std::string out;
    out.reserve(name.size() + 2);
    out += '\'';
    out += name;
    out += '\'';
    return out;
}
}  // namespace

bool FieldReader::has(const char* key) const { return get(key) != nullptr; }

const nlohmann::json* FieldReader::get(const char* key) const
{
    auto it = m_object.find(key);
    if (it == m_object.end() || it->is_null()) return nullptr;
    return &*it;
}

const char* FieldReader::typeName(const nlohmann::json& value)
{
    switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::object: return "an object";
    default: return "a number";
    }
}

ApiError FieldReader::wrongType(const char* key, const char* expected) const
{
    const nlohmann::json* v = get(key);
    return ApiError::badRequest(quote(name(key)) + " must be " + expected + ", got " + (v ? typeName(*v) : "null"),
                                name(key));
}

std::optional<ApiError> FieldReader::readFloat(const char* key, float& out) const
{
    const nlohmann::json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) return wrongType(key, "a number");
    const double d = v->get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 1e30)
        return ApiError::badRequest(quote(name(key)) + " must be a finite number", name(key));
    out = float(d);
    return std::nullopt;
}

std::optional<ApiError> FieldReader::readInt(const char* key, int64_t& out) const
{
    const nlohmann::json* v = get(key);
    if (!v) return std::nullopt;
    if (v->is_number_integer()) {
        if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
            return ApiError::badRequest(quote(name(key)) + " is too large", name(key));
        out = v->get<int64_t>();
        return std::nullopt;
    }
    if (v->is_number_float()) {
        const double d = v->get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
            out = int64_t(d);
            return std::nullopt;
        }
    }
    return wrongType(key, "an integer");
}

std::optional<ApiError> FieldReader::readInt(const char* key, int& out) const
{
    int64_t wide = out;
    if (auto e = readInt(key, wide)) return e;
    if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max())
        return ApiError::badRequest(quote(name(key)) + " is out of range, got " + std::to_string(wide), name(key));
    out = int(wide);
    return std::nullopt;
}

std::optional<ApiError> FieldReader::readBool(const char* key, bool& out) const
{
    const nlohmann::json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return wrongType(key, "a boolean");
    out = v->get<bool>();
    return std::nullopt;
}

std::optional<ApiError> FieldReader::readString(const char* key, std::string& out) const
{
    const nlohmann::json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) return wrongType(key, "a string");
    out = v->get<std::string>();
    return std::nullopt;
}

std::optional<ApiError> FieldReader::readStringOrList(const char* key, std::vector<std::string>& out) const
{
    const nlohmann::json* v = get(key);
    if (!v) return std::nullopt;
    out.clear();
    if (v->is_string()) {
        out.push_back(v->get<std::string>());
    } else if (v->is_array()) {
        for (size_t i = 0; i < v->size(); ++i) {
            if (!(*v)[i].is_string())
                return ApiError::badRequest(quote(name(key) + "[" + std::to_string(i) + "]") +
                                                " must be a string, got " + typeName((*v)[i]),
                                            name(key));
            out.push_back((*v)[i].get<std::string>());
        }
    } else {
        return wrongType(key, "a string or an array of strings");
    }
    return std::nullopt;
}

std::optional<ApiError> FieldReader::readIntList(const char* key, std::vector<int32_t>& out) const
{
    const nlohmann::json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_array()) return wrongType(key, "an array of integers");
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
        const auto& item = (*v)[i];
        if (!item.is_number_integer() || item.get<int64_t>() < std::numeric_limits<int32_t>::min() ||
            item.get<int64_t>() > std::numeric_limits<int32_t>::max())
            return ApiError::badRequest(
                quote(name(key) + "[" + std::to_string(i) + "]") + " must be a token id (an integer)", name(key));
        out.push_back(item.get<int32_t>());
    }
    return std::nullopt;
}

}  // namespace brook
