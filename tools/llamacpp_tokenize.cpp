// llama.cpp's own tokenizer on many texts, for tools/gen_gguf_goldens.py (the oracle of the
// GGUF goldens). Built against llama.cpp's library (see that script's docstring); not part of
// wordsplit.
//
// Usage: llamacpp_tokenize MODEL.gguf < TEXTS > RESULTS
//
// TEXTS: the texts, each followed by the line "__ggml_vocab_test__" (llama.cpp's .inp layout:
// text, "\n__ggml_vocab_test__\n"). RESULTS: per text, one line of ids ("1 2 3", empty for none;
// add_special=false, parse_special=false, as llama.cpp's test-tokenizer-0), then one line of
// the hex bytes of llama_detokenize of those ids (remove_special=false, unparse_special=false).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "llama.h"

static const std::string SEPARATOR = "\n__ggml_vocab_test__\n";

int main(int argc, char ** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s MODEL.gguf < TEXTS\n", argv[0]);
        return 2;
    }
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_backend_init();
    llama_model_params params = llama_model_default_params();
    params.vocab_only = true;
    llama_model * model = llama_model_load_from_file(argv[1], params);
    if (model == nullptr) {
        std::fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    const llama_vocab * vocab = llama_model_get_vocab(model);

    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    size_t at = 0;
    while (at < input.size()) {
        size_t end = input.find(SEPARATOR, at);
        if (end == std::string::npos) {
            std::fprintf(stderr, "the input does not end with a separator\n");
            return 1;
        }
        const std::string text = input.substr(at, end - at);
        at = end + SEPARATOR.size();

        std::vector<llama_token> ids(text.size() + 16);
        int32_t n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), ids.data(), (int32_t) ids.size(),
                                   false, false);
        if (n < 0) {
            ids.resize(-n);
            n = llama_tokenize(vocab, text.data(), (int32_t) text.size(), ids.data(), (int32_t) ids.size(), false,
                               false);
        }
        ids.resize(n);
        for (int32_t i = 0; i < n; i++) {
            std::printf(i ? " %d" : "%d", ids[i]);
        }
        std::printf("\n");

        std::vector<char> out(text.size() * 4 + 64);
        int32_t m = llama_detokenize(vocab, ids.data(), n, out.data(), (int32_t) out.size(), false, false);
        if (m < 0) {
            out.resize(-m);
            m = llama_detokenize(vocab, ids.data(), n, out.data(), (int32_t) out.size(), false, false);
        }
        for (int32_t i = 0; i < m; i++) {
            std::printf("%02x", (unsigned char) out[i]);
        }
        std::printf("\n");
    }
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
