// The one-shot host API: a stream core fed the whole input at once, writing straight into the
// caller's span.
#include "gutf8/codec.hpp"

#include <string>

#include "codec/stream_core.hpp"
#include "gutf8/error.hpp"

namespace gutf8 {

std::string_view describe(error_kind kind) noexcept {
  switch (kind) {
    case error_kind::none:
      return "no error";
    case error_kind::stray_continuation:
      return "unexpected continuation byte";
    case error_kind::invalid_byte:
      return "byte that never appears in UTF-8";
    case error_kind::overlong:
      return "overlong encoding";
    case error_kind::surrogate:
      return "surrogate code point (U+D800..U+DFFF)";
    case error_kind::too_large:
      return "value above U+10FFFF";
    case error_kind::truncated:
      return "incomplete sequence";
    case error_kind::truncated_at_end:
      return "incomplete sequence at end of input";
    case error_kind::ragged_tail:
      return "UTF-32 input length is not a multiple of 4";
    case error_kind::unpaired_surrogate:
      return "unpaired UTF-16 surrogate";
    case error_kind::odd_length:
      return "UTF-16 input length is odd";
  }
  return "unknown error";
}

std::string_view name_of(text_form form) noexcept {
  switch (form) {
    case text_form::utf32le: return "UTF-32LE";
    case text_form::utf32be: return "UTF-32BE";
    case text_form::utf16le: return "UTF-16LE";
    case text_form::utf16be: return "UTF-16BE";
  }
  return "?";
}

namespace {

std::span<const std::uint8_t> bytes_of(std::span<const std::byte> s) noexcept {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

internal::stream_core one_shot(operation op, error_policy policy, const options& opt) {
  return internal::stream_core(stream_config{op, policy, false, opt}, /*single_block=*/true);
}

void require_room(std::size_t have, std::size_t need) {
  if (have < need)
    throw error(errc::output_too_small, "output span holds " + std::to_string(have) +
                                            " units, the worst case needs " + std::to_string(need));
}

transcode_result transcode(operation op, std::span<const std::byte> in, std::uint8_t* out, std::size_t unit,
                           error_policy policy, const options& opt) {
  internal::stream_core s = one_shot(op, policy, opt);
  const std::size_t bytes = s.feed(bytes_of(in), true, out);
  return {s.stats().input, bytes / unit};
}

}  // namespace

summary validate(std::span<const std::byte> utf8, const options& opt) {
  internal::stream_core s = one_shot(operation::validate, error_policy::replace, opt);
  s.feed(bytes_of(utf8), true, nullptr);
  return s.stats().input;
}

text_stats stats(std::span<const std::byte> utf8, const options& opt) {
  internal::stream_core s = one_shot(operation::stats, error_policy::replace, opt);
  s.feed(bytes_of(utf8), true, nullptr);
  return s.stats();
}

transcode_result decode(std::span<const std::byte> utf8, std::span<char32_t> out, error_policy policy,
                        const options& opt) {
  require_room(out.size(), max_decoded_size(utf8.size()));
  return transcode(operation::decode, utf8, reinterpret_cast<std::uint8_t*>(out.data()), 4, policy, opt);
}

transcode_result encode(std::span<const std::byte> utf32le, std::span<char8_t> out, error_policy policy,
                        const options& opt) {
  require_room(out.size(), max_encoded_size(utf32le.size()));
  return transcode(operation::encode, utf32le, reinterpret_cast<std::uint8_t*>(out.data()), 1, policy, opt);
}

transcode_result repair(std::span<const std::byte> utf8, std::span<char8_t> out, error_policy policy,
                          const options& opt) {
  require_room(out.size(), max_repaired_size(utf8.size()));
  return transcode(operation::repair, utf8, reinterpret_cast<std::uint8_t*>(out.data()), 1, policy, opt);
}

std::u32string decode(std::string_view utf8, error_policy policy, summary* info, const options& opt) {
  std::u32string out(max_decoded_size(utf8.size()), U'\0');
  const transcode_result r = decode(as_bytes(utf8), std::span(out), policy, opt);
  out.resize(r.written);
  if (info != nullptr) *info = r.input;
  return out;
}

std::u8string encode(std::u32string_view utf32, error_policy policy, summary* info, const options& opt) {
  const auto in = std::as_bytes(std::span(utf32.data(), utf32.size()));
  std::u8string out(max_encoded_size(in.size()), u8'\0');
  const transcode_result r = encode(in, std::span(out), policy, opt);
  out.resize(r.written);
  if (info != nullptr) *info = r.input;
  return out;
}

std::u8string repair(std::string_view utf8, error_policy policy, summary* info, const options& opt) {
  std::u8string out(max_repaired_size(utf8.size()), u8'\0');
  const transcode_result r = repair(as_bytes(utf8), std::span(out), policy, opt);
  out.resize(r.written);
  if (info != nullptr) *info = r.input;
  return out;
}

namespace {

// One stream core over the whole input in `form`, its output sized by the core itself.
template <class Text>
Text run_form(operation op, std::string_view in, text_form form, error_policy policy, summary* info,
              const options& opt, bool bom) {
  stream_config c{op, policy, false, opt};
  c.form = form;
  c.bom = bom;
  internal::stream_core s(c, /*single_block=*/true);
  Text out(s.max_output(in.size()), {});
  const std::size_t written = s.feed(bytes_of(as_bytes(in)), true, reinterpret_cast<std::uint8_t*>(out.data()));
  out.resize(written);
  if (info != nullptr) *info = s.stats().input;
  return out;
}

}  // namespace

std::string decode_to(std::string_view utf8, text_form form, error_policy policy, summary* info,
                      const options& opt, bool bom) {
  return run_form<std::string>(operation::decode, utf8, form, policy, info, opt, bom);
}

std::u8string encode_from(std::string_view text, text_form form, error_policy policy, summary* info,
                          const options& opt) {
  return run_form<std::u8string>(operation::encode, text, form, policy, info, opt, false);
}

}  // namespace gutf8
