// ModelDownloader against a local fake of the Hugging Face Hub (cpp-httplib): it downloads into
// the cache layout with progress, resumes after a dropped connection and after Cancel (HTTP Range
// from where the partial file stopped), rejects a file whose sha256 is not the hub's (the listing
// names config.json by its real git blob id, which the client checks too), and an
// unreachable hub reads as "offline". The ModelScope source, against a fake ModelScope
// (tests/server/fake_modelscope.h), through the downloader and through the download dialog.
#include "../server/fake_modelscope.h"

#include "engine/model_folder.h"
#include "gui/performance/serving_profile.h"
#include "gui/shell/download_dialog.h"
#include "gui/shell/known_models.h"
#include "gui/shell/model_downloader.h"
#include "hub/modelscope_client.h"
#include "hub/sha1.h"
#include "hub/sha256.h"
#include "testing/test_model_writer.h"

#include <httplib.h>

#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QListWidget>
#include <QDirIterator>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <mutex>
#include <random>
#include <thread>

using namespace brook;

namespace {

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kRepo = "acme/tiny-model";

class FakeHub {
public:
    FakeHub()
    {
        std::mt19937 rng(17);
        m_weights.resize(3 << 20);
        for (char& c : m_weights) c = char(rng());
        m_config = R"({"architectures": ["Ernie4_5ForCausalLM"], "hidden_size": 64})";
        m_server.Get("/api/models/acme/tiny-model/revision/main", [this](const httplib::Request&,
                                                                         httplib::Response& res) {
            const std::string sha = corrupt ? std::string(64, 'a') : Sha256::hash(m_weights);
            const std::string body =
                R"({"sha": ")" + kCommit + R"(", "siblings": [)" + R"({"rfilename": "config.json", "size": )" +
                std::to_string(m_config.size()) + R"(, "blobId": ")" + Sha1::gitBlobId(m_config) + R"("},)" +
                R"({"rfilename": "model.safetensors", "size": )" + std::to_string(m_weights.size()) +
                R"(, "blobId": "2222222222222222222222222222222222222222", "lfs": {"sha256": ")" + sha +
                R"(", "size": )" + std::to_string(m_weights.size()) + R"(}}, {"rfilename": "README.md", "size": 3}]})";
            res.set_content(body, "application/json");
        });
        m_server.Get(
            "/acme/tiny-model/resolve/" + kCommit + "/config.json",
            [this](const httplib::Request&, httplib::Response& res) { res.set_content(m_config, "application/json"); });
        m_server.Get("/acme/tiny-model/resolve/" + kCommit + "/model.safetensors", [this](const httplib::Request& req,
                                                                                          httplib::Response& res) {
            {
                std::lock_guard lock(m_mutex);
                m_rangeHeaders.push_back(req.get_header_value("Range"));
            }
            const bool drop = dropNext.exchange(false);
            res.set_content_provider(
                m_weights.size(), "application/octet-stream",
                [this, drop, sent = size_t(0)](size_t offset, size_t length, httplib::DataSink& sink) mutable {
                    const size_t chunk = std::min<size_t>(length, 64 << 10);
                    if (drop && sent >= m_weights.size() / 3) return false;  // hang up mid-file
                    // A stalled mirror: past stallAt bytes nothing more comes until the test lets go
                    // (or two minutes pass), the connection open and silent.
                    for (int waited = 0; stallAt >= 0 && sent >= size_t(stallAt.load()) && waited < 12000; ++waited)
                        std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    sink.write(m_weights.data() + offset, chunk);
                    sent += chunk;
                    return true;
                });
        });
        m_port = m_server.bind_to_any_port("127.0.0.1");
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
        while (!m_server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ~FakeHub()
    {
        m_server.stop();
        m_thread.join();
    }

    HubOptions options(const QString& cache) const
    {
        HubOptions o;
        o.endpoint = "http://127.0.0.1:" + std::to_string(m_port);
        o.cacheDir = cache.toStdString();
        o.connectTimeoutSeconds = 2;
        o.readTimeoutSeconds = 5;
        o.maxRetries = 3;
        return o;
    }
    std::vector<std::string> ranges()
    {
        std::lock_guard lock(m_mutex);
        return m_rangeHeaders;
    }
    const std::string& weights() const { return m_weights; }

    std::atomic<bool> dropNext{false};
    std::atomic<bool> corrupt{false};
    std::atomic<long> stallAt{-1};  // >= 0: the weights stop after this many bytes (see above)

private:
    httplib::Server m_server;
    std::thread m_thread;
    int m_port = 0;
    std::string m_weights, m_config;
    std::mutex m_mutex;
    std::vector<std::string> m_rangeHeaders;
};

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool waitForSignal(QSignalSpy& spy, int timeoutMs = 30000) { return spy.count() > 0 || spy.wait(timeoutMs); }

}  // namespace

class TestModelDownloader : public QObject {
    Q_OBJECT
private slots:
    void downloadsIntoTheCacheWithProgress()
    {
        FakeHub hub;
        QTemporaryDir cache;
        ModelDownloader downloader;
        QSignalSpy progress(&downloader, &ModelDownloader::progressChanged);
        QSignalSpy finished(&downloader, &ModelDownloader::finished);
        QVERIFY(downloader.start(QString::fromStdString(kRepo), hub.options(cache.path())));
        QVERIFY(!downloader.start(QString::fromStdString(kRepo), hub.options(cache.path())));  // one at a time
        QVERIFY(waitForSignal(finished));
        const QString folder = finished[0][0].toString();
        QVERIFY(folder.endsWith(QString::fromStdString("snapshots/" + kCommit)));
        QCOMPARE(readAll(folder + "/model.safetensors"), QByteArray::fromStdString(hub.weights()));
        QVERIFY(readAll(folder + "/config.json").contains("hidden_size"));
        QVERIFY(!QFile::exists(folder + "/README.md"));  // only model files
        QVERIFY(progress.count() >= 1);
        const auto last = progress.last()[0].value<DownloadStatus>();
        QVERIFY(last.bytesTotal >= qint64(hub.weights().size()));
        QVERIFY(!downloader.isRunning());
    }

    void resumesAfterADroppedConnection()
    {
        FakeHub hub;
        hub.dropNext = true;
        QTemporaryDir cache;
        ModelDownloader downloader;
        QSignalSpy finished(&downloader, &ModelDownloader::finished);
        QSignalSpy failed(&downloader, &ModelDownloader::failed);
        downloader.start(QString::fromStdString(kRepo), hub.options(cache.path()));
        QVERIFY(waitForSignal(finished));
        QCOMPARE(failed.count(), 0);
        const auto ranges = hub.ranges();
        QCOMPARE(ranges.size(), size_t(2));
        QVERIFY(ranges[0].empty());
        QVERIFY2(ranges[1].rfind("bytes=", 0) == 0 && ranges[1] != "bytes=0-",
                 ranges[1].c_str());  // from where it stopped
        QCOMPARE(readAll(finished[0][0].toString() + "/model.safetensors"), QByteArray::fromStdString(hub.weights()));
    }

    void cancelStopsAStalledDownloadKeepsThePartialFileAndTheNextStartResumes()
    {
        // The mirror goes silent a quarter MiB into the weights, and the read would wait 10
        // minutes for it: the cancel must reach the blocked read itself (CancelSignal).
        FakeHub hub;
        hub.stallAt = 256 << 10;
        QTemporaryDir cache;
        ModelDownloader downloader;
        QSignalSpy progress(&downloader, &ModelDownloader::progressChanged);
        QSignalSpy cancelled(&downloader, &ModelDownloader::cancelled);
        QSignalSpy finished(&downloader, &ModelDownloader::finished);
        HubOptions silentFor10Minutes = hub.options(cache.path());
        silentFor10Minutes.readTimeoutSeconds = 600;
        downloader.start(QString::fromStdString(kRepo), silentFor10Minutes);
        // Until the partial file holds what the mirror sent before it went silent (progress
        // reports are throttled, so the last one may show less).
        const auto partialBytes = [&] {
            qint64 most = 0;
            QDirIterator it(cache.path(), {QStringLiteral("*.incomplete")}, QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext()) most = std::max(most, QFileInfo(it.next()).size());
            return most;
        };
        QVERIFY(QTest::qWaitFor([&] { return partialBytes() > 200000; }, 30000));
        QVERIFY(!progress.isEmpty());
        downloader.cancel();
        QVERIFY(waitForSignal(cancelled));  // not after the stall (2 minutes) or the read timeout
        QCOMPARE(finished.count(), 0);

        hub.stallAt = -1;
        downloader.start(QString::fromStdString(kRepo), hub.options(cache.path()));
        QVERIFY(waitForSignal(finished));
        const auto ranges = hub.ranges();
        QVERIFY(ranges.size() >= 2);
        const long resumedAt = std::stol(ranges.back().substr(6));
        QVERIFY2(resumedAt > 200000, ranges.back().c_str());
        QCOMPARE(readAll(finished[0][0].toString() + "/model.safetensors"), QByteArray::fromStdString(hub.weights()));
    }

    void rejectsAWrongChecksum()
    {
        FakeHub hub;
        hub.corrupt = true;
        QTemporaryDir cache;
        ModelDownloader downloader;
        QSignalSpy failed(&downloader, &ModelDownloader::failed);
        QSignalSpy finished(&downloader, &ModelDownloader::finished);
        downloader.start(QString::fromStdString(kRepo), hub.options(cache.path()));
        QVERIFY(waitForSignal(failed));
        QCOMPARE(finished.count(), 0);
        const QString message = failed[0][0].toString();
        QVERIFY2(message.contains(QStringLiteral("sha256")), qPrintable(message));
        QVERIFY(!ModelDownloader::isOfflineError(message));
        QVERIFY(!QFile::exists(cache.filePath(
            QString::fromStdString("models--acme--tiny-model/snapshots/" + kCommit + "/model.safetensors"))));
    }

    void anUnreachableHubReadsAsOffline()
    {
        QTemporaryDir cache;
        HubOptions options;
        options.endpoint = "http://127.0.0.1:9";  // discard port: nothing listens
        options.cacheDir = cache.path().toStdString();
        options.connectTimeoutSeconds = 1;
        ModelDownloader downloader;
        QSignalSpy failed(&downloader, &ModelDownloader::failed);
        downloader.start(QString::fromStdString(kRepo), options);
        QVERIFY(waitForSignal(failed));
        QVERIFY2(ModelDownloader::isOfflineError(failed[0][0].toString()), qPrintable(failed[0][0].toString()));
    }

    void mirrorEndpointOverridesTheEnvironment()
    {
        QCOMPARE(ModelDownloader::optionsFor(QStringLiteral("https://hf-mirror.com/")).endpoint,
                 std::string("https://hf-mirror.com"));
        QCOMPARE(ModelDownloader::optionsFor(QString()).endpoint, HubOptions::fromEnvironment().endpoint);
    }

    void downloadsFromModelScope()
    {
        QTemporaryDir model;
        testing::TestModelOptions shape;
        shape.shape = testing::TestModelShape::tiny();
        QVERIFY(testing::writeTestModel(model.path().toStdString(), shape).ok());
        testsupport::FakeModelScope site(model.path().toStdString());
        const std::string weights = site.content("model.safetensors");
        site.dropLfsOnce = int(weights.size() / 2);  // and it resumes
        QTemporaryDir cache;
        ModelScopeOptions options;
        options.endpoint = site.endpoint();
        options.cacheDir = cache.path().toStdString();
        options.connectTimeoutSeconds = 2;
        options.readTimeoutSeconds = 5;
        ModelDownloader downloader;
        QSignalSpy progress(&downloader, &ModelDownloader::progressChanged);
        QSignalSpy finished(&downloader, &ModelDownloader::finished);
        QSignalSpy failed(&downloader, &ModelDownloader::failed);
        QVERIFY(downloader.start(QString::fromStdString(testsupport::kModelScopeModel), options));
        QVERIFY(!downloader.start(QString::fromStdString(testsupport::kModelScopeModel), options));  // one at a time
        QVERIFY(waitForSignal(finished));
        QCOMPARE(failed.count(), 0);
        const QString folder = finished[0][0].toString();
        QCOMPARE(folder, cache.filePath(QStringLiteral("models/test-org/tiny-ernie-4___5")));
        QCOMPARE(readAll(folder + "/model.safetensors"), QByteArray::fromStdString(weights));
        QVERIFY(ModelFolder::load(folder.toStdString()).ok());
        QVERIFY(progress.count() >= 1);
        bool resumed = false;
        for (const auto& s : site.seen())
            resumed = resumed || (s.path == "/oss/model.safetensors" && s.range.rfind("bytes=", 0) == 0);
        QVERIFY(resumed);

        // Unreachable reads as offline, as for the hub.
        options.endpoint = "http://127.0.0.1:9";
        options.cacheDir = cache.filePath(QStringLiteral("empty")).toStdString();
        options.connectTimeoutSeconds = 1;
        downloader.start(QString::fromStdString(testsupport::kModelScopeModel), options);
        QVERIFY(waitForSignal(failed));
        QVERIFY2(ModelDownloader::isOfflineError(failed[0][0].toString()), qPrintable(failed[0][0].toString()));
    }

    void theDialogOffersKnownModelsWithSizeAndFit()
    {
        DownloadDialog dialog{QString()};
        QListWidget* known = dialog.knownModels();
        QVERIFY(known->count() >= 2);
        // Sized by the planner: ERNIE-4.5-0.3B is ~0.7 GiB of bf16 and fits a computer with 16 GiB,
        // not one with 512 MiB.
        const KnownModel ernie = KnownModels::list().first();
        const LaunchOptions serving = ServingProfile::desktopDefaults();
        const KnownModelFit big = KnownModels::fit(ernie, serving, 16LL << 30);
        QVERIFY(big.downloadBytes > (600LL << 20) && big.downloadBytes < (900LL << 20));
        QVERIFY(big.fits);
        QVERIFY(!KnownModels::fit(ernie, serving, 512LL << 20).fits);
        dialog.setKnownModels(serving, 512LL << 20);
        QVERIFY2(known->item(0)->text().contains(QStringLiteral("MiB")) &&
                     known->item(0)->text().contains(QStringLiteral("more than")),
                 qPrintable(known->item(0)->text()));
        // Picking one fills in its id, for the source chosen.
        auto* repo = dialog.findChild<QLineEdit*>(QStringLiteral("repoId"));
        repo->clear();
        known->setCurrentRow(1);
        QCOMPARE(repo->text(), KnownModels::list()[1].repo);
    }

    void theDialogDownloadsThroughTheModelScopeSource()
    {
        QTemporaryDir model;
        testing::TestModelOptions shape;
        shape.shape = testing::TestModelShape::tiny();
        QVERIFY(testing::writeTestModel(model.path().toStdString(), shape).ok());
        testsupport::FakeModelScope site(model.path().toStdString());
        QTemporaryDir cache;
        qputenv("MODELSCOPE_DOMAIN", QByteArray::fromStdString(site.endpoint()));
        qputenv("MODELSCOPE_CACHE", cache.path().toUtf8());

        DownloadDialog dialog{QString()};
        auto* source = dialog.findChild<QComboBox*>(QStringLiteral("source"));
        auto* repo = dialog.findChild<QLineEdit*>(QStringLiteral("repoId"));
        QVERIFY(source && repo);
        QCOMPARE(repo->text(), QString::fromLatin1(ModelDownloader::kDefaultRepo));
        QVERIFY(source->itemText(int(DownloadDialog::Source::ModelScope)).contains(QStringLiteral("ModelScope")));
        // Choosing ModelScope swaps in ERNIE's ModelScope id, and back; a typed id stays.
        source->setCurrentIndex(int(DownloadDialog::Source::ModelScope));
        QCOMPARE(repo->text(), QStringLiteral("PaddlePaddle/ERNIE-4.5-0.3B-PT"));
        QCOMPARE(dialog.endpoint(), QStringLiteral("https://www.modelscope.cn"));
        source->setCurrentIndex(int(DownloadDialog::Source::HuggingFace));
        QCOMPARE(repo->text(), QString::fromLatin1(ModelDownloader::kDefaultRepo));
        repo->setText(QString::fromStdString(testsupport::kModelScopeModel));
        source->setCurrentIndex(int(DownloadDialog::Source::ModelScope));
        QCOMPARE(repo->text(), QString::fromStdString(testsupport::kModelScopeModel));

        QSignalSpy downloaded(&dialog, &DownloadDialog::modelDownloaded);
        dialog.startDownload();
        QVERIFY2(dialog.statusText().contains(QString::fromStdString(site.endpoint())),
                 qPrintable(dialog.statusText()));
        QVERIFY(waitForSignal(downloaded));
        const QString folder = downloaded[0][0].toString();
        QCOMPARE(folder, cache.filePath(QStringLiteral("models/test-org/tiny-ernie-4___5")));
        QCOMPARE(dialog.downloadedFolder(), folder);
        QVERIFY(ModelFolder::load(folder.toStdString()).ok());
        bool listed = false;
        for (const auto& s : site.seen())
            listed = listed || s.path == "/api/v1/models/" + testsupport::kModelScopeModel + "/repo/files";
        QVERIFY(listed);

        // The saved choice reopens on ModelScope with ERNIE's ModelScope id.
        DownloadDialog again(dialog.endpoint());
        QCOMPARE(again.source(), DownloadDialog::Source::ModelScope);
        QCOMPARE(again.findChild<QLineEdit*>(QStringLiteral("repoId"))->text(),
                 QStringLiteral("PaddlePaddle/ERNIE-4.5-0.3B-PT"));
        qunsetenv("MODELSCOPE_DOMAIN");
        qunsetenv("MODELSCOPE_CACHE");
    }
};

QTEST_MAIN(TestModelDownloader)
#include "test_model_downloader.moc"
