// cooperative_groups partitions and large tiles, each result checked against a host model:
// - labeled_partition of a warp tile (several labels per warp) and binary_partition of a
//   coalesced group made in a divergent branch and of a 16-thread tile: size, rank, meta group,
//   reduce (native int ops, a double sum, a struct arg-max), scans, shfl/shfl_up/shfl_down,
//   ballot/any/all, a sync only one label's lanes reach, a group syncing at two call sites,
//   tiled_partition(coalesced_group, 2);
// - tiles of 64, 128 and 256 threads (block_tile_memory scratch): rank, meta group, sync guarding
//   shared memory, shfl, any/all, reduce and scans, tiles that run different numbers of
//   collectives, a warp tile of a large tile, and a grid-stride sum reduced per 128-thread tile.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

constexpr int kPartBlock = 96, kPartGrid = 2, kK = 40;
constexpr int kBigBlock = 256, kBigGrid = 3, kBK = 24;
constexpr int kSumN = 100003;

struct ArgMax {
  int v, i;
};

__global__ void partitions(const int* in, int* out) {
  const int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
  const int v = in[i];
  int* o = out + i * kK;
  for (int k = 0; k < kK; ++k) o[k] = -7;
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(block);

  // A: labels 0..4 within each warp.
  auto lab = cg::labeled_partition(tile32, v % 5);
  o[0] = lab.size();
  o[1] = lab.thread_rank();
  o[2] = lab.meta_group_size();
  o[3] = lab.meta_group_rank();
  o[4] = cg::reduce(lab, v, cg::plus<int>());
  o[5] = cg::reduce(lab, v, cg::less<int>());
  o[6] = (int)cg::reduce(lab, (unsigned)v * 2654435761u, cg::bit_xor<unsigned>());
  o[7] = (int)(cg::reduce(lab, v * 0.5, cg::plus<double>()) * 2.0);
  o[8] = lab.shfl(v, lab.size() - 1);
  o[9] = cg::inclusive_scan(lab, v);
  o[10] = cg::exclusive_scan(lab, v);
  o[11] = (int)lab.ballot(v > 50);
  o[12] = lab.any(v > 90);
  o[13] = lab.all(v > 5);
  o[14] = lab.shfl_down(v, 1);
  o[15] = lab.shfl_up(v, 2);
  if (v % 5 == 0) {  // only label 0's lanes: the other groups never sync
    lab.sync();
    o[16] = lab.shfl(v * 3, 0);
  }
  if (lab.thread_rank() & 1)  // one group's lanes sync at two call sites
    lab.sync();
  else
    lab.sync();
  ArgMax am = cg::reduce(lab, ArgMax{v, i}, [](ArgMax a, ArgMax b) { return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a; });
  o[17] = am.i;
  auto pairs = cg::tiled_partition(lab, 2);
  o[18] = pairs.size();
  o[19] = pairs.thread_rank();
  o[20] = pairs.meta_group_rank();
  o[21] = cg::reduce(pairs, v, cg::plus<int>());

  // B: the lanes of a divergent branch, split by parity.
  if (v % 3 != 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    auto bp = cg::binary_partition(active, v & 1);
    o[22] = active.size();
    o[23] = active.thread_rank();
    o[24] = bp.size();
    o[25] = bp.thread_rank();
    o[26] = bp.meta_group_size();
    o[27] = bp.meta_group_rank();
    o[28] = cg::reduce(bp, v, cg::greater<int>());
    o[29] = cg::reduce(bp, v, cg::plus<int>());
    o[30] = cg::inclusive_scan(bp, v, cg::plus<int>());
  }
  tile32.sync();

  // C: a 16-thread tile split by a predicate, and its 4-thread tiles.
  auto t16 = cg::tiled_partition<16>(block);
  auto half = cg::binary_partition(t16, v >= 50);
  o[31] = half.size();
  o[32] = half.thread_rank();
  o[33] = half.meta_group_size();
  o[34] = half.meta_group_rank();
  o[35] = cg::reduce(half, v, cg::plus<int>());
  o[36] = t16.meta_group_rank() * 100 + t16.meta_group_size();
  auto t4 = cg::tiled_partition<4>(t16);
  o[37] = t4.meta_group_rank() * 100 + t4.meta_group_size();
  o[38] = (int)t16.match_any(v % 4);
  o[39] = (int)t16.ballot(v & 1);
}

__global__ void big_tiles(const int* in, int* out) {
  __shared__ cg::block_tile_memory<kBigBlock> scratch;
  __shared__ int smem[kBigBlock];
  cg::thread_block block = cg::this_thread_block(scratch);
  const int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
  const int v = in[i];
  int* o = out + i * kBK;
  cg::thread_block_tile<64, cg::thread_block> t64 = cg::tiled_partition<64>(block);
  auto t128 = cg::tiled_partition<128>(block);
  auto t256 = cg::tiled_partition<256>(block);
  o[0] = t64.thread_rank();
  o[1] = t64.num_threads();
  o[2] = t64.meta_group_rank() * 100 + t64.meta_group_size();
  o[3] = t128.meta_group_rank() * 100 + t128.meta_group_size();
  o[4] = cg::reduce(t128, v, cg::plus<int>());
  o[5] = cg::reduce(t64, v, cg::greater<int>());
  o[6] = (int)(cg::reduce(t256, (long long)v * 1000003LL, cg::plus<long long>()) % 1000000007LL);
  o[7] = cg::inclusive_scan(t128, v);
  o[8] = cg::exclusive_scan(t64, v);
  o[9] = t64.shfl(v, 37);
  o[10] = t64.any(v == 7);
  o[11] = t64.all(v < 1000);
  int acc = 0;
  for (int round = 0; round < 4; ++round) {  // the tile's sync orders the shared exchange
    smem[tid] = v + round * 7;
    t64.sync();
    acc += smem[tid ^ 33];
    t64.sync();
  }
  o[12] = acc;
  if (t64.thread_rank() < 32)  // a large tile's warps sync at two call sites
    t64.sync();
  else
    cg::sync(t64);
  int s = 0;  // tile 1 runs twice as many collectives as tile 0
  for (int r = 0; r <= (int)t128.meta_group_rank(); ++r) s += cg::reduce(t128, v + r, cg::plus<int>());
  o[13] = s;
  auto w = cg::tiled_partition<32>(t64);
  o[14] = w.meta_group_rank() * 100 + w.meta_group_size();
  cg::thread_group g = t128;
  g.sync();
  o[15] = (int)g.size();
  ArgMax am = cg::reduce(t128, ArgMax{v, i}, [](ArgMax a, ArgMax b) { return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a; });
  o[16] = am.i;
  o[17] = (int)(cg::inclusive_scan(t256, (double)v, cg::plus<double>()));
  cg::sync(block);
}

// CUDA 11's form of the scratch, and a grid-stride sum reduced per 128-thread tile.
__global__ void tile_sum(const int* in, int n, unsigned long long* total) {
  __shared__ cg::block_tile_memory<4, 256> scratch;
  cg::thread_block block = cg::this_thread_block(scratch);
  auto tile = cg::tiled_partition<128>(block);
  unsigned long long s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += (unsigned)in[i];
  s = cg::reduce(tile, s, cg::plus<unsigned long long>());
  if (tile.thread_rank() == 0) atomicAdd(total, s);
}

// ---------------------------------------------------------------- host model
static int fails = 0;
static void check(const char* what, int thread, int k, int got, int want) {
  if (got == want) return;
  if (++fails <= 20) printf("MISMATCH %s thread %d field %d: got %d want %d\n", what, thread, k, got, want);
}

// The members (lanes, ascending) of the group of `lane` among lanes `pool` with equal key.
static std::vector<int> members(const std::vector<int>& pool, const std::vector<int>& key, int lane) {
  std::vector<int> m;
  for (int l : pool)
    if (key[l] == key[lane]) m.push_back(l);
  return m;
}
static int rank_of(const std::vector<int>& m, int lane) {
  for (size_t r = 0; r < m.size(); ++r)
    if (m[r] == lane) return (int)r;
  return -1;
}

int main() {
  const int np = kPartBlock * kPartGrid, nb = kBigBlock * kBigGrid;
  std::vector<int> hin(np), hbig(nb), hsum(kSumN);
  srand(12345);
  for (int& x : hin) x = rand() % 100;
  for (int& x : hbig) x = rand() % 1000;
  hbig[70] = 7;  // tile 1 of block 0 has a 7
  for (int& x : hsum) x = rand() % 5000;
  int *din, *dout, *dbig, *dbout, *dsum;
  unsigned long long* dtotal;
  cudaMalloc(&din, np * sizeof(int));
  cudaMalloc(&dout, np * kK * sizeof(int));
  cudaMalloc(&dbig, nb * sizeof(int));
  cudaMalloc(&dbout, nb * kBK * sizeof(int));
  cudaMalloc(&dsum, kSumN * sizeof(int));
  cudaMalloc(&dtotal, sizeof(unsigned long long));
  cudaMemcpy(din, hin.data(), np * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(dbig, hbig.data(), nb * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(dsum, hsum.data(), kSumN * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(dtotal, 0, sizeof(unsigned long long));
  partitions<<<kPartGrid, kPartBlock>>>(din, dout);
  big_tiles<<<kBigGrid, kBigBlock>>>(dbig, dbout);
  tile_sum<<<7, 256>>>(dsum, kSumN, dtotal);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    printf("CUDA error %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::vector<int> out(np * kK), bout(nb * kBK);
  unsigned long long total = 0;
  cudaMemcpy(out.data(), dout, out.size() * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(bout.data(), dbout, bout.size() * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost);

  // partitions: warp by warp (32 consecutive threads of a block).
  for (int b = 0; b < kPartGrid; ++b)
    for (int w = 0; w < kPartBlock / 32; ++w) {
      const int base = b * kPartBlock + w * 32;
      std::vector<int> val(32), all(32), lab(32), odd(32), high(32);
      for (int l = 0; l < 32; ++l) {
        val[l] = hin[base + l];
        all[l] = l;
        lab[l] = val[l] % 5;
        odd[l] = val[l] & 1;
        high[l] = val[l] >= 50;
      }
      std::vector<int> leaders;  // lowest lane of each label group, ascending
      for (int l = 0; l < 32; ++l)
        if (members(all, lab, l)[0] == l) leaders.push_back(l);
      std::vector<int> active;
      for (int l = 0; l < 32; ++l)
        if (val[l] % 3 != 0) active.push_back(l);
      for (int l = 0; l < 32; ++l) {
        const int t = base + l;
        const int* o = &out[t * kK];
        const std::vector<int> m = members(all, lab, l);
        const int r = rank_of(m, l), n = (int)m.size();
        int sum = 0, mn = 1 << 30, best = -1, incl = 0, excl = 0, anyp = 0, allp = 1;
        unsigned x = 0, bal = 0;
        double dsum2 = 0;
        for (int k = 0; k < n; ++k) {
          const int u = val[m[k]];
          sum += u;
          mn = u < mn ? u : mn;
          x ^= (unsigned)u * 2654435761u;
          dsum2 += u * 0.5;
          if (best < 0 || u > val[best]) best = m[k];
          if (k <= r) incl += u;
          if (k < r) excl += u;
          if (u > 50) bal |= 1u << k;
          anyp |= u > 90;
          allp &= u > 5;
        }
        int grank = 0;
        for (int ld : leaders) grank += ld < m[0];
        const int pr = r / 2, pfirst = pr * 2;
        int psum = 0;
        for (int k = pfirst; k < pfirst + 2 && k < n; ++k) psum += val[m[k]];
        const int want[22] = {n, r, (int)leaders.size(), grank, sum, mn, (int)x, (int)(dsum2 * 2.0),
                              val[m[n - 1]], incl, excl, (int)bal, anyp, allp,
                              r + 1 < n ? val[m[r + 1]] : val[l], r >= 2 ? val[m[r - 2]] : val[l],
                              lab[l] == 0 ? val[m[0]] * 3 : -7, base + best,
                              (n - pfirst) < 2 ? n - pfirst : 2, r % 2, pr, psum};
        for (int k = 0; k < 22; ++k) check("labeled_partition", t, k, o[k], want[k]);
        if (val[l] % 3 != 0) {
          const std::vector<int> bm = members(active, odd, l);
          const int br = rank_of(bm, l);
          int mx = -1, bs = 0, bincl = 0;
          for (int k = 0; k < (int)bm.size(); ++k) {
            mx = val[bm[k]] > mx ? val[bm[k]] : mx;
            bs += val[bm[k]];
            if (k <= br) bincl += val[bm[k]];
          }
          const int groups = (int)bm.size() == (int)active.size() ? 1 : 2;
          const int want2[9] = {(int)active.size(), rank_of(active, l), (int)bm.size(), br, groups,
                                groups == 2 ? odd[l] : 0, mx, bs, bincl};
          for (int k = 0; k < 9; ++k) check("binary_partition(coalesced)", t, 22 + k, o[22 + k], want2[k]);
        } else {
          for (int k = 22; k <= 30; ++k) check("untouched", t, k, o[k], -7);
        }
        std::vector<int> tile16;
        for (int q = (l & ~15); q < (l & ~15) + 16; ++q) tile16.push_back(q);
        const std::vector<int> hm = members(tile16, high, l);
        int hs = 0;
        for (int q : hm) hs += val[q];
        const int hgroups = hm.size() == 16 ? 1 : 2;
        unsigned match = 0, bal16 = 0;
        for (int q : tile16) {
          if (val[q] % 4 == val[l] % 4) match |= 1u << (q - (l & ~15));
          if (val[q] & 1) bal16 |= 1u << (q - (l & ~15));
        }
        const int lin = w * 32 + l;
        const int want3[9] = {(int)hm.size(), rank_of(hm, l), hgroups, hgroups == 2 ? high[l] : 0, hs,
                              (lin / 16) * 100 + kPartBlock / 16, ((lin % 16) / 4) * 100 + 4, (int)match,
                              (int)bal16};
        for (int k = 0; k < 9; ++k) check("binary_partition(tile16)", t, 31 + k, o[31 + k], want3[k]);
      }
    }

  // big tiles
  for (int b = 0; b < kBigGrid; ++b)
    for (int tid = 0; tid < kBigBlock; ++tid) {
      const int t = b * kBigBlock + tid;
      const int* o = &bout[t * kBK];
      const int* blk = &hbig[b * kBigBlock];
      const int f64 = tid / 64 * 64, f128 = tid / 128 * 128;
      int s128 = 0, m64 = -1, inc128 = 0, exc64 = 0, any7 = 0, all1000 = 1, best = -1;
      long long s256 = 0;
      double inc256 = 0;
      for (int q = 0; q < kBigBlock; ++q) {
        s256 += (long long)blk[q] * 1000003LL;
        if (q <= tid) inc256 += blk[q];
      }
      for (int q = f128; q < f128 + 128; ++q) {
        s128 += blk[q];
        if (q <= tid) inc128 += blk[q];
        if (best < 0 || blk[q] > blk[best]) best = q;
      }
      for (int q = f64; q < f64 + 64; ++q) {
        m64 = blk[q] > m64 ? blk[q] : m64;
        if (q < tid) exc64 += blk[q];
        any7 |= blk[q] == 7;
        all1000 &= blk[q] < 1000;
      }
      int acc = 0;
      for (int round = 0; round < 4; ++round) acc += blk[tid ^ 33] + round * 7;
      int s = 0;
      for (int r = 0; r <= tid / 128; ++r) s += s128 + 128 * r;
      const int want[18] = {tid % 64, 64, (tid / 64) * 100 + 4, (tid / 128) * 100 + 2, s128, m64,
                            (int)(s256 % 1000000007LL), inc128, exc64, blk[f64 + 37], any7, all1000, acc, s,
                            ((tid % 64) / 32) * 100 + 2, 128, b * kBigBlock + best, (int)inc256};
      for (int k = 0; k < 18; ++k) check("large tile", t, k, o[k], want[k]);
    }

  unsigned long long want_total = 0;
  for (int x : hsum) want_total += (unsigned)x;
  if (total != want_total) {
    ++fails;
    printf("MISMATCH tile_sum: got %llu want %llu\n", total, want_total);
  }
  if (fails) {
    printf("FAIL (%d mismatches)\n", fails);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
