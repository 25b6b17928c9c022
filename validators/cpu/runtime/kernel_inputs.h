// The kernel-work check's input substitution: in one run of a check, the device copy of each
// input differs from the host's. Shared by the cpu runtime and the cuda backend's interposer
// (validators/backends/cuda_interposer.cpp includes it), so both backends run the same logic.
//
// The validator hands over, per input, the bytes the host reads (A, the input file) and the
// bytes the kernels should see instead (B, the same input drawn with another seed). Every
// host-to-device copy is scanned for runs of A's bytes (whole, chunked, padded or sliced uploads
// all consist of such runs) and the device copy gets B's bytes at the same offsets; every
// device-to-host copy is scanned for runs of B's bytes and the host gets A's back, so a program
// that reads its inputs back from the device still sees its own. Outputs then follow B only if
// the kernels computed them; the validator decides from the outputs, with the log of what was
// replaced (which byte ranges of each input reached the device as B).
//
// Matching is by content, so it needs no cooperation from the program: an index of 16-byte
// windows of every input at 64-byte strides finds any run of at least 79 bytes in one lookup
// per step, and extends it both ways. Runs shorter than MIN_RUN bytes, and windows of one
// repeated byte (zero padding), are not replaced: they carry too little to be an input's.
#pragma once

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace ckd_subst {

constexpr size_t WINDOW = 16;
constexpr size_t STRIDE = 64;
constexpr size_t MIN_RUN = 64;
constexpr size_t MAX_CANDIDATES = 16;

struct Input {
  size_t itemsize = 1;
  const unsigned char* a = nullptr;  // what the host reads
  const unsigned char* b = nullptr;  // what the kernels see
  size_t n = 0;
  std::vector<std::pair<size_t, size_t>> uploaded;  // [begin, end) of A replaced by B on upload
  size_t returned = 0;                                // bytes of B given back to the host as A
};

struct Entry {
  uint64_t hash;
  uint32_t input;
  uint64_t offset;
  bool operator<(const Entry& o) const { return hash < o.hash; }
};

inline uint64_t window_hash(const unsigned char* p) {
  uint64_t x, y;
  memcpy(&x, p, 8);
  memcpy(&y, p + 8, 8);
  uint64_t h = x * 0x9E3779B97F4A7C15ull ^ (y + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 29);
}

inline bool constant_window(const unsigned char* p) {
  for (size_t i = 1; i < WINDOW; i++)
    if (p[i] != p[0]) return false;
  return true;
}

class Substitution {
 public:
  std::vector<Input> inputs;

  bool active() const { return !inputs.empty(); }

  // Host-to-device: `dst` (the device copy) already holds `src`'s n bytes.
  void on_upload(const void* src, void* dst, size_t n) {
    if (!active() || !src || !dst || n < MIN_RUN) return;
    build(index_a_, false);
    scan(static_cast<const unsigned char*>(src), n, index_a_, false,
         [&](size_t pos, Input& in, size_t off, size_t len) {
           memcpy(static_cast<unsigned char*>(dst) + pos, in.b + off, len);
           in.uploaded.emplace_back(off, off + len);
         });
  }

  // Device-to-host: `dst` (the host copy) already holds the device's n bytes.
  void on_download(void* dst, size_t n) {
    if (!active() || !dst || n < MIN_RUN) return;
    build(index_b_, true);
    unsigned char* d = static_cast<unsigned char*>(dst);
    scan(d, n, index_b_, true, [&](size_t pos, Input& in, size_t off, size_t len) {
      memcpy(d + pos, in.a + off, len);
      in.returned += len;
    });
  }

  // Merged [begin, end) ranges of input i that reached the device as B.
  std::vector<std::pair<size_t, size_t>> merged(size_t i) const {
    std::vector<std::pair<size_t, size_t>> r = inputs[i].uploaded;
    std::sort(r.begin(), r.end());
    std::vector<std::pair<size_t, size_t>> out;
    for (auto& s : r) {
      if (!out.empty() && s.first <= out.back().second) out.back().second = std::max(out.back().second, s.second);
      else out.push_back(s);
    }
    return out;
  }

 private:
  std::vector<Entry> index_a_, index_b_;
  bool built_a_ = false, built_b_ = false;
  size_t step_ = 0;

  void build(std::vector<Entry>& index, bool from_b) {
    bool& built = from_b ? built_b_ : built_a_;
    if (built) return;
    built = true;
    step_ = 8;
    for (uint32_t i = 0; i < inputs.size(); i++) {
      const Input& in = inputs[i];
      step_ = std::min(step_, std::max<size_t>(1, in.itemsize));
      const unsigned char* data = from_b ? in.b : in.a;
      for (size_t off = 0; off + WINDOW <= in.n; off += STRIDE)
        if (!constant_window(data + off)) index.push_back({window_hash(data + off), i, off});
    }
    std::sort(index.begin(), index.end());
  }

  template <class F>
  void scan(const unsigned char* buf, size_t n, const std::vector<Entry>& index, bool from_b, F&& replace) {
    if (index.empty()) return;
    size_t done = 0;  // bytes of buf before this are decided
    for (size_t p = 0; p + WINDOW <= n;) {
      auto range = std::equal_range(index.begin(), index.end(), Entry{window_hash(buf + p), 0, 0});
      size_t best_len = 0, best_start = 0, best_off = 0;
      uint32_t best_in = 0;
      size_t tried = 0;
      for (auto it = range.first; it != range.second && tried < MAX_CANDIDATES; ++it, ++tried) {
        const Input& in = inputs[it->input];
        const unsigned char* data = from_b ? in.b : in.a;
        if (memcmp(buf + p, data + it->offset, WINDOW) != 0) continue;
        size_t back = 0, limit = std::min(p - done, (size_t)it->offset);
        while (back < limit && buf[p - back - 1] == data[it->offset - back - 1]) back++;
        size_t fwd = WINDOW;
        while (p + fwd < n && it->offset + fwd < in.n && buf[p + fwd] == data[it->offset + fwd]) fwd++;
        // Whole elements only: a run that starts or ends inside one matched by chance.
        size_t start_off = it->offset - back, end_off = it->offset + fwd;
        size_t isz = std::max<size_t>(1, in.itemsize);
        size_t a0 = (start_off + isz - 1) / isz * isz, a1 = end_off / isz * isz;
        if (a1 <= a0) continue;
        size_t len = a1 - a0;
        if (len > best_len) {
          best_len = len;
          best_start = p - (it->offset - a0);
          best_off = a0;
          best_in = it->input;
        }
      }
      if (best_len >= MIN_RUN) {
        replace(best_start, inputs[best_in], best_off, best_len);
        p = done = best_start + best_len;
      } else {
        p += step_;
      }
    }
  }
};

// The file the validator writes: "CKDSUB1\n", u32 count, then per input u32 itemsize,
// u64 nbytes, nbytes of A, nbytes of B (little-endian). Returns false on a malformed file.
inline bool parse(const unsigned char* data, size_t size, Substitution& s) {
  if (size < 12 || memcmp(data, "CKDSUB1\n", 8) != 0) return false;
  uint32_t count;
  memcpy(&count, data + 8, 4);
  size_t pos = 12;
  for (uint32_t i = 0; i < count; i++) {
    if (size - pos < 12) return false;
    uint32_t isz;
    uint64_t n;
    memcpy(&isz, data + pos, 4);
    memcpy(&n, data + pos + 4, 8);
    pos += 12;
    if (n > (size - pos) / 2) return false;
    Input in;
    in.itemsize = isz ? isz : 1;
    in.n = n;
    in.a = data + pos;
    in.b = data + pos + n;
    pos += 2 * n;
    s.inputs.push_back(std::move(in));
  }
  return true;
}

}  // namespace ckd_subst
