// ModelScopeClient against a hostile or broken ModelScope (fake_modelscope.h's listing editor):
// entries of the wrong JSON type, file names that are paths on Windows, digests that are not
// digests. Each fails the download with a message: nothing crashes, nothing leaves the cache.
#include "fake_modelscope.h"

#include "hub/modelscope_client.h"
#include "testing/test_model_writer.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace brook;
namespace fs = std::filesystem;
using nlohmann::json;
using namespace brook::testsupport;

namespace {

json& entry(json& files, const std::string& path)
{
    for (auto& f : files)
        if (f["Path"] == path) return f;
    throw std::runtime_error("no entry " + path);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestModelScopeHostile : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_modelDir;

    static ModelScopeOptions options(const FakeModelScope& site, const QTemporaryDir& cache)
    {
        ModelScopeOptions o;
        o.endpoint = site.endpoint();
        o.cacheDir = cache.path().toStdString();
        o.connectTimeoutSeconds = 2;
        o.readTimeoutSeconds = 5;
        o.maxRetries = 1;
        return o;
    }

private slots:
    void initTestCase()
    {
        testing::TestModelOptions model;
        model.shape = testing::TestModelShape::tiny();
        auto written = testing::writeTestModel(m_modelDir.path().toStdString(), model);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().c_str());
    }

    void wrongJsonTypesFailWithAMessage()
    {
        const std::vector<std::pair<std::string, json>> cases = {
            {"Type", 5}, {"Type", json::array()}, {"Sha256", 5}, {"Size", -3}, {"Size", "12"},
        };
        for (const auto& [field, value] : cases) {
            FakeModelScope site(m_modelDir.path().toStdString());
            site.setListingEditor(
                [field = field, value = value](json& files) { entry(files, "config.json")[field] = value; });
            QTemporaryDir cache;
            auto r = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
            QVERIFY2(!r.ok(), (field + "=" + value.dump()).c_str());
            QVERIFY2(contains(r.error(), field) && contains(r.error(), "config.json"), r.error().c_str());
        }
    }

    void unsafeNamesAndDigestsAreRejected()
    {
        for (const std::string name : {"..\\..\\evil.json", "C:evil.json", "NUL.json"}) {
            FakeModelScope site(m_modelDir.path().toStdString());
            site.setContent(name, "{}");
            QTemporaryDir cache;
            auto r = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
            QVERIFY2(!r.ok(), name.c_str());
            QVERIFY2(contains(r.error(), "unsafe file name") && contains(r.error(), name), r.error().c_str());
        }
        FakeModelScope site(m_modelDir.path().toStdString());
        site.setListingEditor([](json& files) { entry(files, "config.json")["Sha256"] = "../../x"; });
        QTemporaryDir cache;
        auto r = ModelScopeClient(options(site, cache)).download(kModelScopeModel);
        QVERIFY(!r.ok());
        QVERIFY2(contains(r.error(), "malformed Sha256") && contains(r.error(), "config.json"), r.error().c_str());
    }
};

QTEST_APPLESS_MAIN(TestModelScopeHostile)
#include "test_modelscope_hostile.moc"
