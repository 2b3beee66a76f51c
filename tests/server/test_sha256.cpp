// Sha256 against FIPS 180-4 / NIST vectors, and incremental updates in random pieces.
#include "hub/sha256.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <random>

using namespace brook;

class TestSha256 : public QObject {
    Q_OBJECT

private slots:
    void knownVectors()
    {
        QCOMPARE(Sha256::hash(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(Sha256::hash("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(Sha256::hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        QCOMPARE(Sha256::hash(std::string(1000000, 'a')),
                 std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
        // 55, 56 and 64 bytes: the padding boundaries.
        QCOMPARE(Sha256::hash(std::string(55, 'a')),
                 std::string("9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"));
        QCOMPARE(Sha256::hash(std::string(56, 'a')),
                 std::string("b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"));
        QCOMPARE(Sha256::hash(std::string(64, 'a')),
                 std::string("ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"));
    }

    void piecesGiveTheSameDigest()
    {
        std::mt19937 rng(99);
        std::string data(100000, '\0');
        for (char& c : data) c = char(rng());
        const std::string whole = Sha256::hash(data);
        for (int round = 0; round < 20; ++round) {
            Sha256 sha;
            size_t pos = 0;
            while (pos < data.size()) {
                const size_t n = std::min(data.size() - pos, size_t(rng() % 200));
                sha.update(data.data() + pos, n);
                pos += n;
            }
            QCOMPARE(sha.hexDigest(), whole);
        }
        data[5000] ^= 1;
        QVERIFY(Sha256::hash(data) != whole);

        QTemporaryDir dir;
        const std::string path = dir.filePath("blob").toStdString();
        std::ofstream(path, std::ios::binary) << data;
        QCOMPARE(*Sha256::hashFile(path), Sha256::hash(data));
        QVERIFY(!Sha256::hashFile(dir.filePath("missing").toStdString()));
    }
};

QTEST_APPLESS_MAIN(TestSha256)
#include "test_sha256.moc"
