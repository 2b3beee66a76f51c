// Result<T>: a value or an error message, for fallible operations at module edges
// (loading files, parsing requests). Messages are written for the caller: they name the
// file, tensor or field that is wrong. (std::expected is C++23; GCC 12 lacks it.)
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace brook {

struct Error {
    std::string message;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_data(std::move(value)) {}
    Result(Error error) : m_data(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_data); }
    explicit operator bool() const { return ok(); }

    T& value() & { assert(ok()); return std::get<T>(m_data); }
    const T& value() const& { assert(ok()); return std::get<T>(m_data); }
    T&& value() && { assert(ok()); return std::get<T>(std::move(m_data)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const std::string& error() const { assert(!ok()); return std::get<Error>(m_data).message; }

private:
    std::variant<T, Error> m_data;
};

// Result<void>: success or an error message.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error.message)) {}

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const std::string& error() const { assert(!ok()); return *m_error; }

private:
    std::optional<std::string> m_error;
};

inline Error makeError(std::string message) { return Error{std::move(message)}; }

} // namespace brook
