// Result<T>: a value or an Error, for fallible operations at module edges (loading files,
// parsing requests, submitting). An Error is {code, field, message}: the message is written for
// the caller and names the file, tensor or field that is wrong; the code and the field let each
// front end answer in its own terms (the server: an HTTP status and OpenAI's error type and param;
// the app: its translated text) without reading the words. (std::expected is C++23; GCC 12 lacks it.)
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace brook {

enum class ErrorCode {
    Failed,           // anything not below: a file that will not load, a device error
    InvalidArgument,  // a value the caller gave is wrong; `field` names it
    ContextTooLong,   // prompt + max_tokens exceed max_model_len (or the whole KV cache)
    ShuttingDown,     // the engine is stopping and takes no more work
    OutOfMemory,      // the settings need more memory than the device offers
    Unreachable,      // a server (a model hub) could not be reached: no network, DNS, TLS, timeouts
};

struct Error {
    std::string message;
    ErrorCode code = ErrorCode::Failed;
    std::string field;  // the request field at fault, in the API's spelling ("top_p"); may be empty
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_data(std::move(value)) {}
    Result(Error error) : m_data(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_data); }
    explicit operator bool() const { return ok(); }

    T& value() &
    {
        assert(ok());
        return std::get<T>(m_data);
    }
    const T& value() const&
    {
        assert(ok());
        return std::get<T>(m_data);
    }
    T&& value() &&
    {
        assert(ok());
        return std::get<T>(std::move(m_data));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const std::string& error() const
    {
        assert(!ok());
        return std::get<Error>(m_data).message;
    }
    const Error& failure() const
    {
        assert(!ok());
        return std::get<Error>(m_data);
    }

private:
    std::variant<T, Error> m_data;
};

// Result<void>: success or an error message.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)) {}

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const std::string& error() const
    {
        assert(!ok());
        return m_error->message;
    }
    const Error& failure() const
    {
        assert(!ok());
        return *m_error;
    }

private:
    std::optional<Error> m_error;
};

inline Error makeError(std::string message) { return Error{std::move(message), ErrorCode::Failed, {}}; }
inline Error makeError(Error error) { return error; }  // passes a callee's error on, code and field kept
// A callee's error with words in front, code and field kept: makeError("x: " + r.error()) loses them.
inline Error withContext(std::string prefix, Error error)
{
    error.message.insert(0, prefix);
    return error;
}
inline Error makeError(ErrorCode code, std::string field, std::string message)
{
    return Error{std::move(message), code, std::move(field)};
}

}  // namespace brook
