// writeTestTokenizer: trains a small BPE sentencepiece model on tests/data/corpus/*.txt and
// writes it with tokenizer JSON files shaped like ERNIE-4.5's: same keys, same chat template,
// <unk>/<s>/</s> at 0/1/2, ERNIE's special strings as user-defined pieces and its 1,009 added
// tokens numbered from the sentencepiece size. Identity normalization, no whitespace cleanup and
// byte fallback make any text (newlines, Chinese, emoji) round-trip exactly.
#include "testing/test_model_writer.h"
#include "testing/test_tokenizer_writer.h"

#include "platform/executable_path.h"
#include "platform/resource_path.h"

#include <nlohmann/json.hpp>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace brook::testing {

namespace {

using OrderedJson = nlohmann::ordered_json;

// ERNIE's special strings that live inside its sentencepiece model.
const char* const kUserDefinedSymbols =
    "<|begin_of_sentence|>,<|end_of_sentence|>,<mask:1>,<mask:4>,<mask:5>,<mask:6>,<mask:7>";

// ERNIE-4.5's chat template, character for character as in its tokenizer_config.json
// ("\n" inside the Jinja string literals is a real newline there too).
const char* const kErnieChatTemplate = "{%- if not add_generation_prompt is defined -%}\n"
                                       "    {%- set add_generation_prompt = true -%}\n"
                                       "{%- endif -%}\n"
                                       "{%- if not cls_token is defined -%}\n"
                                       "    {%- set cls_token = \"<|begin_of_sentence|>\" -%}\n"
                                       "{%- endif -%}\n"
                                       "{%- if not sep_token is defined -%}\n"
                                       "    {%- set sep_token = \"<|end_of_sentence|>\" -%}\n"
                                       "{%- endif -%}\n"
                                       "{{- cls_token -}}\n"
                                       "{%- for message in messages -%}\n"
                                       "    {%- if message[\"role\"] == \"user\" -%}\n"
                                       "        {{- \"User: \" + message[\"content\"] + \"\n\" -}}\n"
                                       "    {%- elif message[\"role\"] == \"assistant\" -%}\n"
                                       "        {{- \"Assistant: \" + message[\"content\"] + sep_token -}}\n"
                                       "    {%- elif message[\"role\"] == \"system\" -%}\n"
                                       "        {{- message[\"content\"] + \"\n\" -}}\n"
                                       "    {%- endif -%}\n"
                                       "{%- endfor -%}\n"
                                       "{%- if add_generation_prompt -%}\n"
                                       "    {{- \"Assistant: \" -}}\n"
                                       "{%- endif -%}";

// The added tokens in ERNIE's added_tokens.json order.
std::vector<std::string> ernieAddedTokens()
{
    std::vector<std::string> tokens = {"<|IMAGE_PLACEHOLDER|>", "<|AUDIO_PLACEHOLDER|>"};
    for (int i = 0; i <= 1000; ++i) tokens.push_back("<|LOC_" + std::to_string(i) + "|>");
    for (const char* t :
         {"<|LOC_BEGIN|>", "<|LOC_END|>", "<|LOC_SEP|>", "<|CROP_COL_SEP|>", "<|CROP_ROW_SEP|>", "<|IMAGE_SEP|>"})
        tokens.emplace_back(t);
    return tokens;
}

// Feeds the corpus lines to the trainer (sorted file order, so training is reproducible).
class CorpusIterator : public sentencepiece::SentenceIterator {
public:
    explicit CorpusIterator(std::vector<std::string> lines) : m_lines(std::move(lines)) {}
    bool done() const override { return m_index >= m_lines.size(); }
    void Next() override { ++m_index; }
    const std::string& value() const override { return m_lines[m_index]; }
    sentencepiece::util::Status status() const override { return {}; }

private:
    std::vector<std::string> m_lines;
    size_t m_index = 0;
};

Result<std::vector<std::string>> readCorpus(const std::filesystem::path& folder)
{
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path());
    }
    if (ec || files.empty()) return makeError("test tokenizer: no *.txt corpus in " + folder.string());
    std::sort(files.begin(), files.end());
    std::vector<std::string> lines;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        for (std::string line; std::getline(in, line);) {
            if (!line.empty()) lines.push_back(std::move(line));
        }
    }
    return lines;
}

Result<std::string> trainModel(const TestTokenizerOptions& options)
{
    const std::filesystem::path corpusFile = findResource("test-corpus");
    if (corpusFile.empty())
        return makeError("test tokenizer: share/brook/test-corpus is not beside this program (" +
                         executablePath().string() + ")");
    auto lines = readCorpus(corpusFile);
    if (!lines) return lines.failure();
    const std::unordered_map<std::string, std::string> flags = {
        {"model_type", "bpe"},
        {"vocab_size", std::to_string(options.vocabSize)},
        {"normalization_rule_name", "identity"},
        {"add_dummy_prefix", options.addDummyPrefix ? "true" : "false"},
        {"remove_extra_whitespaces", "false"},
        {"allow_whitespace_only_pieces", "true"},
        {"byte_fallback", "true"},
        {"split_digits", "true"},
        {"character_coverage", "0.9995"},
        {"unk_id", "0"},
        {"bos_id", "1"},
        {"eos_id", "2"},
        {"pad_id", "-1"},
        {"user_defined_symbols", kUserDefinedSymbols},
        {"input_sentence_size", "0"},
        {"shuffle_input_sentence", "false"},
        {"num_threads", "2"},
        {"minloglevel", "2"},  // the trainer logs every step to stderr otherwise
    };
    CorpusIterator corpus(std::move(*lines));
    std::string model;
    const auto status = sentencepiece::SentencePieceTrainer::Train(flags, &corpus, &model);
    if (!status.ok()) return makeError("test tokenizer: sentencepiece training failed: " + status.ToString());
    return model;
}

// Trains once per option set and process; later calls reuse the serialized model.
Result<std::string> cachedModel(const TestTokenizerOptions& options)
{
    static std::mutex mutex;
    static std::map<std::pair<int, bool>, std::string> cache;
    const std::lock_guard lock(mutex);
    const auto key = std::make_pair(options.vocabSize, options.addDummyPrefix);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
    auto model = trainModel(options);
    if (!model) return model.failure();
    cache.emplace(key, *model);
    return model;
}

Result<void> writeFile(const std::filesystem::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return makeError("test tokenizer: cannot write " + path.string());
    return {};
}

OrderedJson namedTokens()
{
    return OrderedJson{
        {"bos_token", "<s>"},
        {"eos_token", "</s>"},
        {"pad_token", "<unk>"},
        {"unk_token", "<unk>"},
        {"cls_token", "<|begin_of_sentence|>"},
        {"sep_token", "<|end_of_sentence|>"},
        {"mask_token", "<mask:1>"},
        {"sys_start_token", "<mask:4>"},
        {"sys_end_token", "<mask:5>"},
        {"header_start_token", "<mask:6>"},
        {"header_end_token", "<mask:7>"},
    };
}

}  // namespace

Result<void> writeTestTokenizer(const std::filesystem::path& dir, const TestTokenizerOptions& options)
{
    auto model = cachedModel(options);
    if (!model) return model.failure();
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return makeError("test tokenizer: cannot create " + dir.string() + ": " + ec.message());

    sentencepiece::SentencePieceProcessor processor;
    if (const auto status = processor.LoadFromSerializedProto(*model); !status.ok())
        return makeError("test tokenizer: trained model does not load: " + status.ToString());
    const int pieces = processor.GetPieceSize();  // added tokens are numbered from here
    const std::vector<std::string> added = ernieAddedTokens();
    OrderedJson addedJson = OrderedJson::object();
    for (size_t i = 0; i < added.size(); ++i) addedJson[added[i]] = pieces + static_cast<int>(i);

    OrderedJson specialMap = namedTokens();
    specialMap["additional_special_tokens"] = added;

    OrderedJson config = namedTokens();
    config["additional_special_tokens"] = nullptr;
    config["tokenizer_class"] = "Ernie4_5_Tokenizer";
    config["auto_map"] = {{"AutoTokenizer", {"tokenization_ernie4_5.Ernie4_5_Tokenizer", nullptr}}};
    config["chat_template"] = kErnieChatTemplate;

    for (const auto& [name, bytes] : std::initializer_list<std::pair<const char*, std::string>>{
             {"tokenizer.model", *model},
             {"added_tokens.json", addedJson.dump()},
             {"special_tokens_map.json", specialMap.dump(4)},
             {"tokenizer_config.json", config.dump(4)},
         }) {
        if (auto written = writeFile(dir / name, bytes); !written) return written;
    }
    return {};
}

Result<void> writeTestTokenizer(const std::filesystem::path& dir, int vocabSize)
{
    TestTokenizerOptions options;
    options.vocabSize = vocabSize;
    return writeTestTokenizer(dir, options);
}

}  // namespace brook::testing
