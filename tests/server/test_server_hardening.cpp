// The HTTP layer under hostile or unusual clients: a thousand slow connections do not starve a
// new client and get 408; pipelined requests are all answered in order; HTTP/1.0 streams are not
// chunked; chunked and compressed bodies cannot get past the body limit; broken framing gets a
// prompt 400; long URIs a typed 414; and the browser guards (Host, Origin, CORS default).
#include "raw_http_client.h"
#include "server/origin_policy.h"
#include "server_test_support.h"

#include <QtTest>

#include <vector>

using namespace brook;
using namespace brook::testsupport;
using nlohmann::json;

namespace {

constexpr std::chrono::seconds kAnswerWithin{20};  // generous: a hang shows as a missing answer

std::string post(const std::string& path, const std::string& body, const std::string& extraHeaders = {},
                 const char* version = "HTTP/1.1")
{
    return "POST " + path + " " + version + "\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extraHeaders +
           "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

std::string exchange(int port, const std::string& request)
{
    RawSocket s(port);
    if (!s.ok() || !s.send(request)) return {};
    return s.readUntilClosed(kAnswerWithin);
}

json errorOf(const std::string& response)
{
    json body = json::parse(bodyOf(response), nullptr, false);
    return body.is_object() && body.contains("error") ? body["error"] : json();
}

}  // namespace

class TestServerHardening : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<InProcessServer> m_server;

private slots:
    void initTestCase()
    {
        raiseOpenFileLimit();
        m_server = std::make_unique<InProcessServer>();
    }
    void cleanupTestCase() { m_server.reset(); }

    void slowClientsGetADeadlineAndLeaveRoomForOthers()
    {
        ServeConfig config = testServeConfig();
        config.httpThreads = 128;
        config.maxConnectionsPerClient = 8;
        config.httpReadTimeoutSeconds = 1;                             // slow after 0.25 s
        InProcessServer server(config, serverLaunchOptions(), false);  // /health needs no model

        // 1,000 connections from 127.0.0.1, each sending one header line and then nothing.
        std::vector<RawSocket> slow;
        for (int i = 0; i < 1000; ++i) {
            slow.emplace_back(server.port());
            QVERIFY(slow.back().ok());
            QVERIFY(slow.back().send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
        }
        // Another client is served meanwhile.
        RawSocket other(server.port(), "127.0.0.2");
        QVERIFY(other.ok());
        QVERIFY(other.send("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"));
        const std::string answer = other.readUntilClosed(kAnswerWithin);
        QCOMPARE(statusOf(answer), 503);  // /health's answer while no model is attached: it was routed

        // Every slow connection ends with an answer: 408 past the deadline, or 429 past the cap of
        // slow connections.
        int timedOut = 0, refused = 0;
        for (RawSocket& s : slow) {
            const int status = statusOf(s.readUntilClosed(kAnswerWithin));
            QVERIFY2(status == 408 || status == 429, std::to_string(status).c_str());
            (status == 408 ? timedOut : refused)++;
        }
        QVERIFY(timedOut >= 1);
        QVERIFY(refused >= 1);
    }

    void timeoutAnswerIsAnOpenAiError()
    {
        ServeConfig config = testServeConfig();
        config.httpReadTimeoutSeconds = 0.2;
        InProcessServer server(config, serverLaunchOptions(), false);
        RawSocket s(server.port());
        QVERIFY(s.send(post("/v1/completions", "{\"prompt\": \"hi\"}").substr(0, 60)));  // the body never comes
        const std::string answer = s.readUntilClosed(kAnswerWithin);
        QCOMPARE(statusOf(answer), 408);
        QCOMPARE(errorOf(answer)["type"].get<std::string>(), std::string("invalid_request_error"));
    }

    void pipelinedRequestsAreAnsweredInOrder()
    {
        const std::string answer =
            exchange(m_server->port(), "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                       "GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                                       "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        QCOMPARE(countResponses(answer), 3);
        const size_t models = answer.find("tiny-ernie");
        const size_t version = answer.find("\"version\"");
        QVERIFY(models != std::string::npos && version != std::string::npos);
        QVERIFY(models < version);
    }

    void http10StreamEndsByClosingNotChunked()
    {
        json body = chatBody("Count to five.", 6, true);
        const std::string answer =
            exchange(m_server->port(), post("/v1/chat/completions", body.dump(), {}, "HTTP/1.0"));
        QCOMPARE(statusOf(answer), 200);
        const std::string head = headOf(answer);
        QVERIFY2(head.find("chunked") == std::string::npos, head.c_str());
        QVERIFY2(head.find("Connection: close") != std::string::npos, head.c_str());
        const std::string events = bodyOf(answer);
        QVERIFY2(events.rfind("data: ", 0) == 0, events.c_str());  // no chunk-size line first
        QVERIFY(events.find("data: [DONE]") != std::string::npos);
    }

    void chunkedBodyOverTheLimitIs413()
    {
        ServeConfig config = testServeConfig();
        config.maxRequestBodyBytes = 100000;
        InProcessServer server(config);
        RawSocket s(server.port());
        std::string request = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              "Transfer-Encoding: chunked\r\n\r\n";
        const std::string chunk(8192, 'a');
        for (int i = 0; i < 25; ++i) request += "2000\r\n" + chunk + "\r\n";  // 200 KiB
        request += "0\r\n\r\n";
        s.send(request);
        const std::string answer = s.readUntilClosed(kAnswerWithin);
        QCOMPARE(statusOf(answer), 413);
        QCOMPARE(errorOf(answer)["code"].get<std::string>(), std::string("request_too_large"));

        // Under the limit a chunked body is fine.
        const std::string small = json{{"prompt", "hi"}, {"max_tokens", 2}}.dump();
        char size[16];
        std::snprintf(size, sizeof(size), "%zx", small.size());
        const std::string ok =
            exchange(server.port(), "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                                    "Connection: close\r\n\r\n" +
                                        std::string(size) + "\r\n" + small + "\r\n0\r\n\r\n");
        QCOMPARE(statusOf(ok), 200);
    }

    void compressedBodyIs415()
    {
        // A few bytes of gzip could inflate to gigabytes: compressed bodies are refused unread.
        const std::string gzipMagic("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10);
        const std::string answer =
            exchange(m_server->port(), post("/v1/completions", gzipMagic, "Content-Encoding: gzip\r\n"));
        QCOMPARE(statusOf(answer), 415);
        QCOMPARE(errorOf(answer)["type"].get<std::string>(), std::string("invalid_request_error"));
    }

    void badContentLengthIs400AtOnce()
    {
        for (const char* length : {"-1", "abc", "99999999999999999999999"}) {
            const std::string answer =
                exchange(m_server->port(), std::string("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                       "Content-Length: ") +
                                               length + "\r\n\r\n{}");
            QCOMPARE(statusOf(answer), 400);
            QVERIFY2(errorOf(answer)["message"].get<std::string>().find("Content-Length") != std::string::npos,
                     answer.c_str());
        }
    }

    void longUriIs414Typed()
    {
        const std::string answer = exchange(m_server->port(), "GET /v1/models?x=" + std::string(10000, 'a') +
                                                                  " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        QCOMPARE(statusOf(answer), 414);
        QCOMPARE(errorOf(answer)["type"].get<std::string>(), std::string("invalid_request_error"));
    }

    void hostHeaderMustNameThisMachineOnLoopback()
    {
        for (const char* host :
             {"localhost", "localhost:8000", "api.localhost:1", "127.0.0.1:8000", "[::1]:8000", "[::1]", "10.1.2.3"}) {
            const std::string answer = exchange(m_server->port(), std::string("GET /v1/models HTTP/1.1\r\nHost: ") +
                                                                      host + "\r\nConnection: close\r\n\r\n");
            QVERIFY2(statusOf(answer) == 200, host);
        }
        for (const char* host : {"evil.example", "evil.example:8000", "localhost.evil.example", "[not-ip]:80"}) {
            const std::string answer = exchange(m_server->port(), std::string("GET /v1/models HTTP/1.1\r\nHost: ") +
                                                                      host + "\r\nConnection: close\r\n\r\n");
            QVERIFY2(statusOf(answer) == 403, host);
            QCOMPARE(errorOf(answer)["code"].get<std::string>(), std::string("invalid_host"));
        }
    }

    void browsersFromOtherOriginsAreRefusedByDefault()
    {
        httplib::Client c("127.0.0.1", m_server->port());
        auto foreign = c.Post("/v1/completions", {{"Origin", "http://evil.example"}},
                              json{{"prompt", "hi"}, {"max_tokens", 2}}.dump(), "application/json");
        QVERIFY(foreign);
        QCOMPARE(foreign->status, 403);
        QCOMPARE(json::parse(foreign->body)["error"]["code"].get<std::string>(), std::string("origin_not_allowed"));
        QVERIFY(!foreign->has_header("Access-Control-Allow-Origin"));
        auto preflight = c.Options("/v1/completions",
                                   {{"Origin", "http://evil.example"}, {"Access-Control-Request-Method", "POST"}});
        QVERIFY(!preflight->has_header("Access-Control-Allow-Origin"));
        // No Origin: not a browser (curl, the SDKs): served as before.
        QCOMPARE(m_server->client().post("/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}}).status, 200);

        ServeConfig config = testServeConfig();
        config.allowedOrigins = {"http://good.example"};
        InProcessServer named(config);
        httplib::Client n("127.0.0.1", named.port());
        auto good = n.Get("/v1/models", {{"Origin", "http://good.example"}});
        QCOMPARE(good->status, 200);
        QCOMPARE(good->get_header_value("Access-Control-Allow-Origin"), std::string("http://good.example"));
        QCOMPARE(n.Get("/v1/models", {{"Origin", "http://evil.example"}})->status, 403);
    }

    void localHostNames()
    {
        QVERIFY(OriginPolicy::isLocalHostName("LOCALHOST:80"));
        QVERIFY(OriginPolicy::isLocalHostName("localhost."));
        QVERIFY(OriginPolicy::isLocalHostName("192.168.1.4:8000"));
        QVERIFY(!OriginPolicy::isLocalHostName("localhost:http"));
        QVERIFY(!OriginPolicy::isLocalHostName("127.0.0.1.nip.io"));
        QVERIFY(!OriginPolicy::isLocalHostName("[::1]x"));
        QVERIFY(!OriginPolicy::isLocalHostName(""));
    }
};

QTEST_GUILESS_MAIN(TestServerHardening)
#include "test_server_hardening.moc"
