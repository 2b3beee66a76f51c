// Sha1 against FIPS 180-4 vectors and git's own object ids (`git hash-object`), incremental
// updates in random pieces, and whole files.
#include "hub/sha1.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <random>

using namespace brook;

class TestSha1 : public QObject {
    Q_OBJECT

private slots:
    void knownVectors()
    {
        QCOMPARE(Sha1::hash(""), std::string("da39a3ee5e6b4b0d3255bfef95601890afd80709"));
        QCOMPARE(Sha1::hash("abc"), std::string("a9993e364706816aba3e25717850c26c9cd0d89d"));
        QCOMPARE(Sha1::hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                 std::string("84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
        QCOMPARE(Sha1::hash(std::string(1000000, 'a')), std::string("34aa973cd4c4daa4f61eeb2bdbad27316534016f"));
    }

    void gitBlobIds()
    {
        // `printf '' | git hash-object --stdin` and `echo hello | git hash-object --stdin`.
        QCOMPARE(Sha1::gitBlobId(""), std::string("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"));
        QCOMPARE(Sha1::gitBlobId("hello\n"), std::string("ce013625030ba8dba906f756967f9e9ca394464a"));
        QTemporaryDir dir;
        const std::string path = dir.filePath("blob").toStdString();
        std::ofstream(path, std::ios::binary) << "hello\n";
        QCOMPARE(*Sha1::gitBlobIdOfFile(path), std::string("ce013625030ba8dba906f756967f9e9ca394464a"));
        QVERIFY(!Sha1::gitBlobIdOfFile(dir.filePath("missing").toStdString()));
    }

    void piecesGiveTheSameDigest()
    {
        std::mt19937 rng(7);
        std::string data(50000, '\0');
        for (char& c : data) c = char(rng());
        const std::string whole = Sha1::hash(data);
        for (int round = 0; round < 20; ++round) {
            Sha1 sha;
            size_t pos = 0;
            while (pos < data.size()) {
                const size_t n = std::min(data.size() - pos, size_t(rng() % 200));
                sha.update(data.data() + pos, n);
                pos += n;
            }
            QCOMPARE(sha.hexDigest(), whole);
        }
        QTemporaryDir dir;
        const std::string path = dir.filePath("blob").toStdString();
        std::ofstream(path, std::ios::binary) << data;
        QCOMPARE(*Sha1::gitBlobIdOfFile(path), Sha1::gitBlobId(data));
    }
};

QTEST_APPLESS_MAIN(TestSha1)
#include "test_sha1.moc"
