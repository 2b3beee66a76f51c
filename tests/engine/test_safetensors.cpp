// Tests for SafetensorsFile / SafetensorsWriter and the fp32 <-> bf16 / fp16 conversions:
// round trips of random tensors in every float dtype, exhaustive widening checked against a
// ldexp reference (subnormals, inf, nan; aligned and unaligned data), narrowing checked against
// the round-to-nearest-even property (every tie included), and corrupt files of every kind
// giving errors that name the file and tensor instead of crashing.
#include "engine/safetensors_file.h"
#include "engine/safetensors_writer.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#ifndef _WIN32
#include <sys/stat.h>
#endif

using namespace brook;

namespace {

// Independent decoders: sign, exponent and mantissa fields put together with ldexp.
double fp16Reference(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 31) return m ? std::nan("") : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(double(m), -24);
    return sign * std::ldexp(double(1024 + m), e - 25);
}

double bf16Reference(uint16_t h)
{
    const int e = (h >> 7) & 255, m = h & 127;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 255) return m ? std::nan("") : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(double(m), -133);
    return sign * std::ldexp(double(128 + m), e - 134);
}

// Magnitude of code m, treating the inf code as the next power of two (the rounding target).
double magnitude(uint16_t m, bool fp16)
{
    if (fp16 && m == 0x7c00) return 65536.0;
    if (!fp16 && m == 0x7f80) return std::ldexp(1.0, 128);
    return fp16 ? fp16Reference(m) : bf16Reference(m);
}

// True when `code` is `x` rounded to nearest, ties to even (x finite).
bool isNearestEven(float x, uint16_t code, bool fp16)
{
    if (bool(code & 0x8000) != std::signbit(x)) return false;
    const uint16_t m = code & 0x7fff;
    const uint16_t infCode = fp16 ? 0x7c00 : 0x7f80;
    if (m > infCode) return false;
    const double ax = std::fabs(double(x));
    const double d = std::fabs(ax - magnitude(m, fp16));
    if (m > 0 && std::fabs(ax - magnitude(m - 1, fp16)) < d) return false;
    if (m < infCode) {
        const double up = std::fabs(ax - magnitude(m + 1, fp16));
        if (up < d) return false;
        if (up == d && (m & 1)) return false;
    }
    if (m > 0 && std::fabs(ax - magnitude(m - 1, fp16)) == d && (m & 1)) return false;
    return true;
}

void writeRaw(const QString& path, const std::string& header, const std::vector<char>& data,
              std::optional<uint64_t> declaredLength = std::nullopt)
{
    std::ofstream out(path.toStdString(), std::ios::binary);
    const uint64_t length = declaredLength.value_or(header.size());
    for (int i = 0; i < 8; ++i) out.put(char((length >> (8 * i)) & 0xff));
    out << header;
    out.write(data.data(), std::streamsize(data.size()));
}

std::vector<float> randomValues(size_t n, std::mt19937& rng)
{
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-20, 12);
    std::vector<float> v(n);
    for (float& x : v) x = std::ldexp(normal(rng), exponent(rng));
    return v;
}

}  // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

private slots:
    void widensEveryHalfExactly();
    void narrowsToNearestEven();
    void narrowsSpecialValues();
    void roundTripsEveryFloatDtype();
    void roundTripsIntegerDtypesAndMetadata();
    void padsHeaderToMultipleOfEight();
    void writerRejectsSizeMismatch();
    void truncatedFileNamesFirstTensorPastEnd();
    void headerLengthPastEndOfFile();
    void wrongOffsetsNameTensor();
    void unknownDtypeNamesTensor();
    void garbageFilesGiveErrors();
    void missingFileNamesPath();
    void deepMetadataIsAnErrorNotACrash();
    void metadataValuesMustBeStrings();
    void offsetsMustTileTheDataSection();
    void zeroSizeTensorsMayShareAnOffset();
    void hugeHeaderLengthIsRefused();
    void shapeProductOverflowIsRefused();
    void fifoIsRefusedWithoutBlocking();

private:
    QTemporaryDir m_dir;
    QString path(const char* name) const { return m_dir.filePath(name); }
};

void TestSafetensors::widensEveryHalfExactly()
{
    // All 65536 codes, through the bulk converter at an odd address (mapped data need not be aligned).
    std::vector<std::byte> storage(2 * 65536 + 1);
    for (uint32_t h = 0; h < 65536; ++h) {
        const uint16_t code = uint16_t(h);
        std::memcpy(storage.data() + 1 + 2 * h, &code, 2);
    }
    for (DType dtype : {DType::F16, DType::BF16}) {
        TensorView view{"all", "mem", dtype, {256, 256}, storage.data() + 1, 2 * 65536};
        std::vector<float> out(65536);
        convertToFloat32(view, out.data());
        for (uint32_t h = 0; h < 65536; ++h) {
            const double expected = dtype == DType::F16 ? fp16Reference(uint16_t(h)) : bf16Reference(uint16_t(h));
            const float single = dtype == DType::F16 ? fp16ToFloat(uint16_t(h)) : bf16ToFloat(uint16_t(h));
            if (std::isnan(expected)) {
                QVERIFY2(std::isnan(out[h]) && std::isnan(single), qPrintable(QString::number(h, 16)));
                QCOMPARE(std::signbit(out[h]), bool(h & 0x8000));
            } else {
                QVERIFY2(std::bit_cast<uint32_t>(out[h]) == std::bit_cast<uint32_t>(float(expected)),
                         qPrintable(QStringLiteral("%1 code %2").arg(dtypeName(dtype)).arg(h, 0, 16)));
                QCOMPARE(std::bit_cast<uint32_t>(single), std::bit_cast<uint32_t>(out[h]));
            }
        }
    }
}

void TestSafetensors::narrowsToNearestEven()
{
    // Every exact midpoint between neighbouring codes (a tie) and its float neighbours, both signs.
    for (bool fp16 : {true, false}) {
        const uint16_t infCode = fp16 ? 0x7c00 : 0x7f80;
        for (uint16_t m = 0; m < infCode; ++m) {
            const float mid = float((magnitude(m, fp16) + magnitude(m + 1, fp16)) / 2);
            if (!std::isfinite(mid)) continue;  // bf16's last midpoint is 2^128 - 2^119 > FLT_MAX
            for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), -mid}) {
                const uint16_t code = fp16 ? floatToFp16(x) : floatToBf16(x);
                QVERIFY2(isNearestEven(x, code, fp16), qPrintable(QStringLiteral("%1: %2 -> %3")
                                                                      .arg(fp16 ? "fp16" : "bf16")
                                                                      .arg(double(x), 0, 'g', 12)
                                                                      .arg(code, 0, 16)));
            }
        }
    }
    // Random finite floats over the whole range.
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) {
        const float x = std::bit_cast<float>(uint32_t(rng()));
        if (!std::isfinite(x)) continue;
        QVERIFY2(isNearestEven(x, floatToFp16(x), true), qPrintable(QString::number(double(x), 'g', 12)));
        QVERIFY2(isNearestEven(x, floatToBf16(x), false), qPrintable(QString::number(double(x), 'g', 12)));
    }
}

void TestSafetensors::narrowsSpecialValues()
{
    QCOMPARE(floatToFp16(INFINITY), uint16_t(0x7c00));
    QCOMPARE(floatToFp16(-INFINITY), uint16_t(0xfc00));
    QCOMPARE(floatToBf16(INFINITY), uint16_t(0x7f80));
    QCOMPARE(floatToBf16(-INFINITY), uint16_t(0xff80));
    QCOMPARE(floatToFp16(65520.0f), uint16_t(0x7c00));  // the tie above 65504 goes to inf
    QCOMPARE(floatToFp16(65519.0f), uint16_t(0x7bff));
    QCOMPARE(floatToBf16(std::numeric_limits<float>::max()), uint16_t(0x7f80));
    QCOMPARE(floatToFp16(std::ldexp(1.0f, -24)), uint16_t(0x0001));  // smallest subnormal
    QCOMPARE(floatToFp16(std::ldexp(1.0f, -25)), uint16_t(0x0000));  // tie to even: zero
    QCOMPARE(floatToFp16(-0.0f), uint16_t(0x8000));
    // A nan stays a nan, also one whose payload sits only in the bits narrowing drops.
    const float lowPayloadNan = std::bit_cast<float>(0x7f800001u);
    QVERIFY(std::isnan(lowPayloadNan));
    QVERIFY(std::isnan(bf16ToFloat(floatToBf16(lowPayloadNan))));
    QVERIFY(std::isnan(fp16ToFloat(floatToFp16(lowPayloadNan))));
    QVERIFY(std::isnan(fp16ToFloat(floatToFp16(-std::nanf("")))));
}

void TestSafetensors::roundTripsEveryFloatDtype()
{
    std::mt19937 rng(42);
    for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
        const std::vector<int64_t> shapeA = {37, 19}, shapeB = {1001};
        const auto a = randomValues(37 * 19, rng), b = randomValues(1001, rng);
        SafetensorsWriter writer;
        writer.addFloat("layer.a", dtype, shapeA, a);
        writer.addFloat("b", dtype, shapeB, b);
        writer.addFloat("scalar", dtype, {}, {2.5f});
        const QString file = path("roundtrip.safetensors");
        QVERIFY(writer.write(file.toStdString()).ok());

        auto opened = SafetensorsFile::open(file.toStdString());
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().c_str());
        const SafetensorsFile& f = **opened;
        QCOMPARE(f.tensors().size(), size_t(3));
        for (auto [name, shape, values] : {std::tuple{"layer.a", shapeA, &a}, std::tuple{"b", shapeB, &b}}) {
            const TensorView* t = f.find(name);
            QVERIFY(t);
            QCOMPARE(t->dtype, dtype);
            QCOMPARE(t->shape, shape);
            QCOMPARE(t->file, std::string("roundtrip.safetensors"));
            QCOMPARE(t->numBytes, values->size() * dtypeSize(dtype));
            std::vector<float> back(size_t(t->numElements()));
            convertToFloat32(*t, back.data());
            for (size_t i = 0; i < values->size(); ++i) {
                const float x = (*values)[i];
                const float expected = dtype == DType::F32   ? x
                                       : dtype == DType::F16 ? fp16ToFloat(floatToFp16(x))
                                                             : bf16ToFloat(floatToBf16(x));
                QCOMPARE(back[i], expected);
                const float relTol = dtype == DType::F32 ? 0.0f : dtype == DType::F16 ? 1.0f / 2048 : 1.0f / 256;
                if (std::fabs(x) > 1e-4f) QVERIFY(std::fabs(back[i] - x) <= relTol * std::fabs(x));  // normal range
            }
        }
        QCOMPARE(f.find("scalar")->numElements(), int64_t(1));
        QVERIFY(f.find("missing") == nullptr);
    }
}

void TestSafetensors::roundTripsIntegerDtypesAndMetadata()
{
    SafetensorsWriter writer;
    std::vector<int32_t> ints = {-5, 0, 7, 123456};
    std::vector<std::byte> bytes(ints.size() * 4);
    std::memcpy(bytes.data(), ints.data(), bytes.size());
    writer.add("ints", DType::I32, {2, 2}, bytes);
    writer.add("bytes", DType::U8, {3}, {std::byte{1}, std::byte{2}, std::byte{255}});
    writer.setMetadata("format", "pt");
    writer.setMetadata("note", "brook test");
    QVERIFY(writer.write(path("ints.safetensors").toStdString()).ok());
    auto f = SafetensorsFile::open(path("ints.safetensors").toStdString());
    QVERIFY(f.ok());
    QCOMPARE((*f)->metadata().at("format"), std::string("pt"));
    QCOMPARE((*f)->metadata().at("note"), std::string("brook test"));
    QCOMPARE((*f)->tensors().count("__metadata__"), size_t(0));
    const TensorView* t = (*f)->find("ints");
    std::vector<float> asFloat(4);
    convertToFloat32(*t, asFloat.data());
    QCOMPARE(asFloat, (std::vector<float>{-5.0f, 0.0f, 7.0f, 123456.0f}));
    QCOMPARE(std::to_integer<int>((*f)->find("bytes")->data[2]), 255);
}

void TestSafetensors::padsHeaderToMultipleOfEight()
{
    for (int nameLength = 1; nameLength <= 9; ++nameLength) {
        SafetensorsWriter writer;
        writer.addFloat(std::string(size_t(nameLength), 'w'), DType::F32, {3}, {1.0f, 2.0f, 3.0f});
        const std::string file = path("pad.safetensors").toStdString();
        QVERIFY(writer.write(file).ok());
        std::ifstream in(file, std::ios::binary);
        unsigned char length[8];
        in.read(reinterpret_cast<char*>(length), 8);
        uint64_t n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | length[i];
        QCOMPARE(n % 8, uint64_t(0));
        QCOMPARE(std::filesystem::file_size(file), 8 + n + 12);
        auto f = SafetensorsFile::open(file);
        QVERIFY(f.ok());
        QCOMPARE(reinterpret_cast<uintptr_t>((*f)->tensors().begin()->second.data) % 8, uintptr_t(0));
    }
}

void TestSafetensors::writerRejectsSizeMismatch()
{
    SafetensorsWriter writer;
    writer.add("short", DType::F32, {4}, std::vector<std::byte>(12));
    auto result = writer.write(path("bad_write.safetensors").toStdString());
    QVERIFY(!result.ok());
    QVERIFY(result.error().find("'short'") != std::string::npos);
}

void TestSafetensors::truncatedFileNamesFirstTensorPastEnd()
{
    SafetensorsWriter writer;  // laid out in name order: a, b, c
    std::mt19937 rng(3);
    writer.addFloat("a", DType::BF16, {64}, randomValues(64, rng));
    writer.addFloat("b", DType::BF16, {64}, randomValues(64, rng));
    writer.addFloat("c", DType::BF16, {64}, randomValues(64, rng));
    const std::string file = path("model.safetensors").toStdString();
    QVERIFY(writer.write(file).ok());
    const auto size = std::filesystem::file_size(file);
    std::filesystem::resize_file(file, size - 128 - 20);  // cuts into "b"; "c" is gone too
    auto f = SafetensorsFile::open(file);
    QVERIFY(!f.ok());
    QVERIFY2(f.error().find("model.safetensors") != std::string::npos, f.error().c_str());
    QVERIFY2(f.error().find("'b'") != std::string::npos, f.error().c_str());
    QVERIFY2(f.error().find("truncated") != std::string::npos, f.error().c_str());
    QVERIFY(f.error().find("'c'") == std::string::npos);
}

void TestSafetensors::headerLengthPastEndOfFile()
{
    const std::string header = R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    writeRaw(path("long_header.safetensors"), header, {0, 0, 0, 0}, 5000);
    auto f = SafetensorsFile::open(path("long_header.safetensors").toStdString());
    QVERIFY(!f.ok());
    QVERIFY2(f.error().find("long_header.safetensors") != std::string::npos, f.error().c_str());
    QVERIFY2(f.error().find("header length 5000") != std::string::npos, f.error().c_str());
}

void TestSafetensors::wrongOffsetsNameTensor()
{
    const struct {
        const char* header;
        const char* expected;
    } cases[] = {
        {R"({"ok":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[8,28]}})",
         "'w': data_offsets span 20 bytes, but F32 [2, 3] needs 24"},
        {R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[8,4]}})", "'w': data_offsets [8, 4]"},
        {R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0]}})", "'w': 'data_offsets'"},
        {R"({"w":{"dtype":"F16","shape":[-2],"data_offsets":[0,4]}})", "'w': shape"},
        {R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[100,104]}})", "'w' (bytes 100..104"},
        {R"({"w":{"shape":[2],"data_offsets":[0,4]}})", "'w': missing or non-string 'dtype'"},
        {R"({"w":[1,2]})", "'w': header entry is not an object"},
        {R"({"__metadata__":[1],"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", "__metadata__"},
    };
    for (const auto& c : cases) {
        writeRaw(path("offsets.safetensors"), c.header, std::vector<char>(32, 1));
        auto f = SafetensorsFile::open(path("offsets.safetensors").toStdString());
        QVERIFY2(!f.ok(), c.header);
        QVERIFY2(f.error().find(c.expected) != std::string::npos, f.error().c_str());
        QVERIFY2(f.error().find("offsets.safetensors") != std::string::npos, f.error().c_str());
    }
}

void TestSafetensors::unknownDtypeNamesTensor()
{
    writeRaw(path("f8.safetensors"), R"({"scales":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}})",
             {1, 2, 3, 4});
    auto f = SafetensorsFile::open(path("f8.safetensors").toStdString());
    QVERIFY(!f.ok());
    QVERIFY2(f.error().find("'scales'") != std::string::npos, f.error().c_str());
    QVERIFY2(f.error().find("F8_E4M3") != std::string::npos, f.error().c_str());
}

void TestSafetensors::garbageFilesGiveErrors()
{
    std::mt19937 rng(11);
    const std::string file = path("garbage.safetensors").toStdString();
    for (int i = 0; i < 300; ++i) {
        std::vector<char> bytes(rng() % 300);
        for (char& c : bytes) c = char(rng());
        if (i % 3 == 0 && bytes.size() >= 8) {  // plausible length, garbage JSON
            const uint64_t n = rng() % (bytes.size() - 7);
            for (int k = 0; k < 8; ++k) bytes[size_t(k)] = char((n >> (8 * k)) & 0xff);
            if (n > 0) bytes[8] = '{';
        }
        std::ofstream(file, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
        auto f = SafetensorsFile::open(file);
        QVERIFY2(!f.ok(), qPrintable(QString::number(i)));
        QVERIFY(f.error().find("garbage.safetensors") != std::string::npos);
    }
    writeRaw(path("text.safetensors"), "{not json at all}", {});
    auto f = SafetensorsFile::open(path("text.safetensors").toStdString());
    QVERIFY(!f.ok());
    QVERIFY2(f.error().find("not valid JSON") != std::string::npos, f.error().c_str());
}

void TestSafetensors::missingFileNamesPath()
{
    auto f = SafetensorsFile::open(path("nowhere.safetensors").toStdString());
    QVERIFY(!f.ok());
    QVERIFY2(f.error().find("nowhere.safetensors") != std::string::npos, f.error().c_str());
}

void TestSafetensors::deepMetadataIsAnErrorNotACrash()
{
    // 100,000 levels: dumping or copying such a value recursed until the stack overflowed.
    const int depth = 100000;
    const std::string header = R"({"__metadata__":{"x":)" + std::string(depth, '[') + std::string(depth, ']') +
                               R"(},"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
    writeRaw(path("deep.safetensors"), header, {7});
    auto f = SafetensorsFile::open(path("deep.safetensors").toStdString());
    QVERIFY(!f.ok());
    QVERIFY2(f.error().find("deep.safetensors") != std::string::npos, f.error().c_str());
    QVERIFY2(f.error().find("nests deeper") != std::string::npos, f.error().c_str());
}

void TestSafetensors::metadataValuesMustBeStrings()
{
    for (const char* value : {"5", "[\"a\"]", "{\"k\":\"v\"}", "null", "true"}) {
        const std::string header = std::string(R"({"__metadata__":{"format":"pt","n":)") + value +
                                   R"(},"t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
        writeRaw(path("meta.safetensors"), header, {7});
        auto f = SafetensorsFile::open(path("meta.safetensors").toStdString());
        QVERIFY2(!f.ok(), value);
        QVERIFY2(f.error().find("meta.safetensors") != std::string::npos, f.error().c_str());
        QVERIFY2(f.error().find("__metadata__ value of 'n'") != std::string::npos, f.error().c_str());
    }
}

void TestSafetensors::offsetsMustTileTheDataSection()
{
    const struct {
        const char* header;
        size_t dataBytes;
        const char* expected;
    } cases[] = {
        // b starts inside a (both sizes right, so only the overlap is wrong)
        {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
         12, "overlap"},
        // two tensors on the same bytes
        {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
         8, "overlap"},
        // bytes 8..12 belong to no tensor
        {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
         16, "hole"},
        // the first tensor does not start at 0
        {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8, "hole"},
        // bytes after the last tensor
        {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 9, "1 trailing bytes"},
        {R"({"__metadata__":{"format":"pt"}})", 3, "3 trailing bytes"},
    };
    for (const auto& c : cases) {
        writeRaw(path("tiles.safetensors"), c.header, std::vector<char>(c.dataBytes, 1));
        auto f = SafetensorsFile::open(path("tiles.safetensors").toStdString());
        QVERIFY2(!f.ok(), c.header);
        QVERIFY2(f.error().find(c.expected) != std::string::npos, f.error().c_str());
        QVERIFY2(f.error().find("tiles.safetensors") != std::string::npos, f.error().c_str());
        QVERIFY2(f.error().find("data_offsets") != std::string::npos || f.error().find("trailing") != std::string::npos,
                 f.error().c_str());
    }
}

void TestSafetensors::zeroSizeTensorsMayShareAnOffset()
{
    // Empty tensors take no bytes, so several may sit at one offset, also where a tensor starts.
    writeRaw(
        path("empty.safetensors"),
        R"({"e1":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
        R"("e2":{"dtype":"F16","shape":[3,0],"data_offsets":[4,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})",
        {1, 2, 3, 4, 5, 6});
    auto f = SafetensorsFile::open(path("empty.safetensors").toStdString());
    QVERIFY2(f.ok(), f.ok() ? "" : f.error().c_str());
    QCOMPARE((*f)->tensors().size(), size_t(4));
    QCOMPARE(std::to_integer<int>((*f)->find("b")->data[1]), 6);
    QCOMPARE((*f)->find("e2")->numElements(), int64_t(0));
    // Widening an empty tensor into an empty vector (data() null) touches nothing; found by
    // fuzz_safetensors_header under -fsanitize=undefined (memcpy to null), which this catches there.
    for (const char* name : {"e1", "e2"}) {
        std::vector<float> none;
        convertToFloat32(*(*f)->find(name), none.data());
    }
}

void TestSafetensors::hugeHeaderLengthIsRefused()
{
    // -1 as a u64: 8 + N wraps around if added before comparing.
    for (uint64_t length : {~uint64_t(0), ~uint64_t(0) - 7, uint64_t(1) << 63}) {
        writeRaw(path("minus_one.safetensors"), "{}", {}, length);
        auto f = SafetensorsFile::open(path("minus_one.safetensors").toStdString());
        QVERIFY(!f.ok());
        QVERIFY2(f.error().find("minus_one.safetensors: header length " + std::to_string(length)) != std::string::npos,
                 f.error().c_str());
    }
}

void TestSafetensors::shapeProductOverflowIsRefused()
{
    // 2^62 x 2^62 overflows even when a zero dimension comes first; 2^61 F32 elements are 2^63 bytes.
    for (const char* shape :
         {"[0,4611686018427387904,4611686018427387904]", "[2305843009213693952]", "[18446744073709551615]"}) {
        const std::string header =
            std::string(R"({"w":{"dtype":"F32","shape":)") + shape + R"(,"data_offsets":[0,0]}})";
        writeRaw(path("overflow.safetensors"), header, {});
        auto f = SafetensorsFile::open(path("overflow.safetensors").toStdString());
        QVERIFY2(!f.ok(), shape);
        QVERIFY2(f.error().find("'w': shape entry") != std::string::npos, f.error().c_str());
        QVERIFY2(f.error().find("too large") != std::string::npos, f.error().c_str());
    }
}

void TestSafetensors::fifoIsRefusedWithoutBlocking()
{
#ifdef _WIN32
    QSKIP("no FIFOs in the Windows file system");
#else
    // Without a writer, a plain open() of a FIFO waits forever: this test would hang.
    const std::string fifo = path("model.safetensors.fifo").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    auto f = SafetensorsFile::open(fifo);
    QVERIFY(!f.ok());
    QVERIFY2(f.error().find("model.safetensors.fifo: not a regular file") != std::string::npos, f.error().c_str());
#endif
}

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
