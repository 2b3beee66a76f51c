// HttpReply: how every route writes JSON and errors into a cpp-httplib response, in one place.
// Included by .cpp files only, so cpp-httplib stays out of the server's public headers.
#pragma once

#include "server/api_error.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace brook {

class HttpReply {
public:
    template <typename Json>
    static void json(httplib::Response& res, int status, const Json& body)
    {
        res.status = status;
        res.set_content(dumpJson(body), "application/json");
    }
    static void error(httplib::Response& res, const ApiError& error)
    {
        res.status = error.status;
        res.set_content(error.body(), "application/json");
    }
};

}  // namespace brook
