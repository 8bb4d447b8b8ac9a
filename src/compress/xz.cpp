// xz: liblzma decodes concatenated streams and their padding as xz -d does, and encodes as xz does
// (CRC64 check); for parts, its file-info decoder reads the indexes, and each block decodes alone.
#include <lzma.h>

#include <array>
#include <string>

#include "compress/codecs.hpp"
#include "gutf8/error.hpp"

namespace gutf8::internal::compress {

namespace {

// What a stream may ask to decode (xz -9 needs 65 MiB; larger dictionaries are refused, as zstd
// refuses windows past 128 MiB by default).
constexpr std::uint64_t memory_limit = std::uint64_t{1} << 30;
constexpr std::size_t index_read = 64 * 1024;  // bytes read at a time for the file-info decoder

// An lzma_stream that ends with its owner.
struct stream {
  lzma_stream s = LZMA_STREAM_INIT;
  stream() = default;
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  ~stream() { lzma_end(&s); }
  void bind(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) noexcept {
    s.next_in = in.data();
    s.avail_in = in.size();
    s.next_out = out.data();
    s.avail_out = out.size();
  }
};

const char* reason(lzma_ret rc) noexcept {
  switch (rc) {
    case LZMA_FORMAT_ERROR:
      return "not in the xz format";
    case LZMA_OPTIONS_ERROR:
      return "unsupported options";
    case LZMA_DATA_ERROR:
      return "compressed data is corrupt";
    default:
      return "liblzma error";
  }
}

// Throws for every result but progress (LZMA_OK), the end, and LZMA_BUF_ERROR (no progress).
void check_decode(lzma_ret rc, std::uint64_t at) {
  if (rc == LZMA_OK || rc == LZMA_STREAM_END || rc == LZMA_BUF_ERROR) return;
  if (rc == LZMA_MEM_ERROR) throw error(errc::out_of_memory, "liblzma: out of memory");
  if (rc == LZMA_MEMLIMIT_ERROR)
    throw error(errc::io_failure, "xz data at compressed byte " + std::to_string(at) + " needs more than " +
                                      std::to_string(memory_limit >> 20) + " MiB to decompress");
  throw_corrupt(format::xz, at, reason(rc));
}

class xz_decoder final : public frame_decoder {
 public:
  xz_decoder() { restart(); }
  step decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool last, std::uint64_t at) override {
    z_.bind(in, out);
    const lzma_ret rc = lzma_code(&z_.s, last ? LZMA_FINISH : LZMA_RUN);
    const step s{in.size() - z_.s.avail_in, out.size() - z_.s.avail_out, rc == LZMA_STREAM_END};
    check_decode(rc, at + s.consumed);
    return s;
  }
  void restart() override {
    if (lzma_stream_decoder(&z_.s, memory_limit, LZMA_CONCATENATED) != LZMA_OK)
      throw error(errc::out_of_memory, "liblzma: lzma_stream_decoder failed");
  }

 private:
  stream z_;
};

class xz_block_decoder final : public frame_decoder {
 public:
  xz_block_decoder(std::uint32_t check, std::optional<std::uint64_t> text_size)
      : check_(check), text_size_(text_size.value_or(LZMA_VLI_UNKNOWN)) {}
  step decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool, std::uint64_t at) override {
    step s;
    if (!in_block_) {
      s.consumed = gather_header(in, at);
      if (!in_block_) return s;
      in = in.subspan(s.consumed);
    }
    z_.bind(in, out);
    const lzma_ret rc = lzma_code(&z_.s, LZMA_RUN);
    s.consumed += in.size() - z_.s.avail_in;
    s.produced = out.size() - z_.s.avail_out;
    s.end = rc == LZMA_STREAM_END;
    check_decode(rc, at + s.consumed);
    return s;
  }
  void restart() override {
    header_.clear();
    in_block_ = false;
  }

 private:
  // Takes the block header's bytes from in (it may arrive in pieces) and starts the block's decoder
  // once it is whole; returns the bytes taken.
  std::size_t gather_header(std::span<const std::uint8_t> in, std::uint64_t at) {
    std::size_t taken = 0;
    while (!in_block_ && taken < in.size()) {
      if (header_.empty() && in[taken] == 0) throw_corrupt(format::xz, at + taken, "an index where a block should be");
      const std::size_t size = header_.empty() ? 1 : lzma_block_header_size_decode(header_[0]);
      const std::size_t take = std::min(size - header_.size(), in.size() - taken);
      header_.insert(header_.end(), in.begin() + static_cast<std::ptrdiff_t>(taken),
                     in.begin() + static_cast<std::ptrdiff_t>(taken + take));
      taken += take;
      if (size > 1 && header_.size() == size) start_block(at + taken);
    }
    return taken;
  }
  void start_block(std::uint64_t at) {
    std::array<lzma_filter, LZMA_FILTERS_MAX + 1> filters{};
    block_ = lzma_block{};
    block_.version = 1;
    block_.check = static_cast<lzma_check>(check_);
    block_.header_size = static_cast<std::uint32_t>(header_.size());
    block_.filters = filters.data();
    lzma_ret rc = lzma_block_header_decode(&block_, nullptr, header_.data());
    if (rc == LZMA_OK) {
      if (block_.uncompressed_size == LZMA_VLI_UNKNOWN) block_.uncompressed_size = text_size_;
      const std::uint64_t need = lzma_raw_decoder_memusage(filters.data());                 // what xz -d's limit checks
      rc = need > memory_limit ? LZMA_MEMLIMIT_ERROR : lzma_block_decoder(&z_.s, &block_);  // keeps &block_
      lzma_filters_free(filters.data(), nullptr);
    }
    if (rc == LZMA_OK && text_size_ != LZMA_VLI_UNKNOWN && block_.uncompressed_size != text_size_) rc = LZMA_DATA_ERROR;
    if (rc == LZMA_PROG_ERROR) rc = LZMA_DATA_ERROR;
    if (rc != LZMA_OK) check_decode(rc, at);
    in_block_ = true;
  }

  std::uint32_t check_;
  lzma_vli text_size_;
  std::vector<std::uint8_t> header_;
  bool in_block_ = false;
  lzma_block block_{};
  stream z_;
};

class xz_encoder final : public frame_encoder {
 public:
  explicit xz_encoder(int level) {
    if (lzma_easy_encoder(&z_.s, static_cast<std::uint32_t>(level), LZMA_CHECK_CRC64) != LZMA_OK)
      throw error(errc::invalid_argument, "liblzma: no encoder for xz level " + std::to_string(level));
  }
  step encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, bool finish) override {
    z_.bind(in, out);
    const lzma_ret rc = lzma_code(&z_.s, finish ? LZMA_FINISH : LZMA_RUN);
    if (rc != LZMA_OK && rc != LZMA_STREAM_END && rc != LZMA_BUF_ERROR)
      throw error(rc == LZMA_MEM_ERROR ? errc::out_of_memory : errc::io_failure, "liblzma: encoding failed");
    return {in.size() - z_.s.avail_in, out.size() - z_.s.avail_out, rc == LZMA_STREAM_END};
  }

 private:
  stream z_;
};

// Each part a whole stream (liblzma reuses the encoder's memory when it starts the next one).
class xz_part_encoder final : public part_encoder {
 public:
  explicit xz_part_encoder(int level) : level_(static_cast<std::uint32_t>(level)) {}
  [[nodiscard]] std::size_t bound(std::size_t text) const override { return lzma_stream_buffer_bound(text); }
  std::size_t encode(std::span<const std::uint8_t> text, std::span<std::uint8_t> out) override {
    if (lzma_easy_encoder(&z_.s, level_, LZMA_CHECK_CRC64) != LZMA_OK)
      throw error(errc::invalid_argument, "liblzma: no encoder for xz level " + std::to_string(level_));
    z_.bind(text, out);
    const lzma_ret rc = lzma_code(&z_.s, LZMA_FINISH);
    if (rc != LZMA_STREAM_END)
      throw error(rc == LZMA_MEM_ERROR ? errc::out_of_memory : errc::io_failure, "liblzma: part encoding failed");
    return out.size() - z_.s.avail_out;
  }

 private:
  std::uint32_t level_;
  stream z_;
};

struct free_index {
  void operator()(lzma_index* i) const noexcept { lzma_index_end(i, nullptr); }
};

// The file's combined index, read at the places the file-info decoder asks for; none where it fails.
std::unique_ptr<lzma_index, free_index> read_index(const random_reader& read, std::uint64_t file_size) {
  stream z;
  lzma_index* index = nullptr;
  if (lzma_file_info_decoder(&z.s, &index, memory_limit, file_size) != LZMA_OK) return nullptr;
  std::vector<std::uint8_t> buffer(index_read);
  for (std::uint64_t pos = 0;;) {
    if (z.s.avail_in == 0 && pos < file_size) {
      const auto chunk = std::span(buffer).first(std::min<std::uint64_t>(buffer.size(), file_size - pos));
      read(chunk, pos);
      z.s.next_in = chunk.data();
      z.s.avail_in = chunk.size();
      pos += chunk.size();
    }
    const lzma_ret rc = lzma_code(&z.s, LZMA_RUN);
    if (rc == LZMA_SEEK_NEEDED) {
      pos = z.s.seek_pos;
      z.s.avail_in = 0;
    } else if (rc == LZMA_STREAM_END) {
      return std::unique_ptr<lzma_index, free_index>(index);
    } else if (rc != LZMA_OK) {
      return nullptr;
    }
  }
}

}  // namespace

std::unique_ptr<frame_decoder> make_xz_decoder() { return std::make_unique<xz_decoder>(); }
std::unique_ptr<frame_decoder> make_xz_block_decoder(std::uint32_t check, std::optional<std::uint64_t> text_size) {
  return std::make_unique<xz_block_decoder>(check, text_size);
}
std::unique_ptr<frame_encoder> make_xz_encoder(int level) { return std::make_unique<xz_encoder>(level); }
std::unique_ptr<part_encoder> make_xz_part_encoder(int level) { return std::make_unique<xz_part_encoder>(level); }

std::optional<std::vector<xz_block>> xz_blocks(const random_reader& read, std::uint64_t file_size) {
  const auto index = read_index(read, file_size);
  if (!index) return std::nullopt;
  std::vector<xz_block> blocks;
  lzma_index_iter it;
  lzma_index_iter_init(&it, index.get());
  while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_BLOCK))
    blocks.push_back({it.block.compressed_file_offset, it.block.total_size, it.block.uncompressed_size,
                      it.stream.number, static_cast<std::uint32_t>(it.stream.flags->check)});
  return blocks;
}

}  // namespace gutf8::internal::compress
