// Runtime API calls the CPU shim emulates beyond the basics (test_cpu_runtime_api_coverage.py).
// nvcc 13 builds it unchanged; each line prints what a GPU answers or what the emulator's device
// (4 SMs of 2048 threads, 8 blocks and 164 KiB of shared memory) makes of it.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      printf("FAIL %s: %s (%s)\n", #x, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

// Uses all the dynamic shared memory it is given (more than 48 KiB after the opt-in).
__global__ void big_smem(int* out, int words) {
  extern __shared__ int buf[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buf[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long s = 0;
    for (int i = 0; i < words; ++i) s += buf[i];
    *out = (int)(s % 1000003);
  }
}

struct SmemPerBlock {
  __host__ __device__ size_t operator()(int threads) const { return (size_t)threads * 64; }
};

int main() {
  // Occupancy.
  int grid = 0, block = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, add_one, 0, 0));
  printf("potential %d %d\n", grid, block);
  CHECK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, add_one, 0, 200));
  printf("potential_limit %d %d\n", grid, block);
  CHECK(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, add_one, SmemPerBlock()));
  printf("variable %d %d\n", grid, block);
  CHECK(cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(&grid, &block, add_one, SmemPerBlock(), 256,
                                                                cudaOccupancyDefault));
  printf("variable_flags %d %d\n", grid, block);
  CHECK(cudaOccupancyMaxPotentialBlockSizeWithFlags(&grid, &block, add_one, 40000, 0, cudaOccupancyDefault));
  printf("potential_flags %d %d\n", grid, block);
  size_t avail = 0;
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&avail, add_one, 2, 256));
  printf("available %zu\n", avail);
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&avail, add_one, 16, 256));
  printf("available_too_many %zu\n", avail);
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, add_one, 256, 0));
  printf("per_sm %d\n", per_sm);

  // Dynamic shared memory beyond 48 KiB: refused, then allowed after the opt-in.
  int* out;
  CHECK(cudaMalloc(&out, sizeof(int)));
  const int words = 20000;  // 80000 bytes
  big_smem<<<1, 128, words * sizeof(int)>>>(out, words);
  printf("big_smem_before %s\n", cudaGetErrorName(cudaGetLastError()));
  CHECK(cudaFuncSetAttribute(big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, words * (int)sizeof(int)));
  CHECK(cudaFuncSetAttribute(big_smem, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  big_smem<<<1, 128, words * sizeof(int)>>>(out, words);
  CHECK(cudaGetLastError());
  int got = 0;
  CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  printf("big_smem_after %d\n", got);
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, big_smem));
  printf("func_max_dynamic %d\n", fa.maxDynamicSharedSizeBytes);
  printf("set_attr_too_big %s\n",
         cudaGetErrorName(cudaFuncSetAttribute(big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20)));
  cudaGetLastError();

  // Managed memory attached to a stream.
  const int n = 1000;
  float* m;
  CHECK(cudaMallocManaged(&m, n * sizeof(float), cudaMemAttachHost));
  for (int i = 0; i < n; ++i) m[i] = (float)i;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -1));
  CHECK(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle));
  add_one<<<(n + 255) / 256, 256, 0, s>>>(m, n);
  CHECK(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachHost));
  CHECK(cudaStreamSynchronize(s));
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += m[i];
  printf("managed_sum %.0f\n", sum);

  // Stream queries.
  unsigned flags = 0;
  int prio = 0, dev = -1;
  unsigned long long id1 = 0, id2 = 0;
  CHECK(cudaStreamGetFlags(s, &flags));
  CHECK(cudaStreamGetPriority(s, &prio));
  CHECK(cudaStreamGetDevice(s, &dev));
  cudaStream_t s2;
  CHECK(cudaStreamCreate(&s2));
  CHECK(cudaStreamGetId(s, &id1));
  CHECK(cudaStreamGetId(s2, &id2));
  printf("stream flags=%u prio=%d dev=%d ids_differ=%d\n", flags, prio, dev, (int)(id1 != id2));
  cudaStreamCaptureStatus cs;
  CHECK(cudaStreamGetCaptureInfo(s2, &cs));
  printf("capture_none %d\n", (int)(cs == cudaStreamCaptureStatusNone));

  // Events with flags.
  cudaEvent_t ev;
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  CHECK(cudaEventRecordWithFlags(ev, s, cudaEventRecordDefault));
  CHECK(cudaEventSynchronize(ev));
  CHECK(cudaEventDestroy(ev));

  // Device queries and flags.
  int chosen = -1;
  cudaDeviceProp want;
  memset(&want, 0, sizeof want);
  want.major = 8;
  CHECK(cudaChooseDevice(&chosen, &want));
  CHECK(cudaInitDevice(0, 0, 0));
  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  unsigned dflags = 0;
  CHECK(cudaGetDeviceFlags(&dflags));
  printf("device chosen=%d sched=%u maphost=%d\n", chosen, dflags & cudaDeviceScheduleMask,
         (int)((dflags & cudaDeviceMapHost) != 0));
  char bus[32];
  CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
  int by_bus = -1;
  CHECK(cudaDeviceGetByPCIBusId(&by_bus, bus));
  printf("pci %s -> %d\n", bus, by_bus);
  cudaFuncCache cc;
  CHECK(cudaDeviceGetCacheConfig(&cc));
  int integrated = -1, mode = -1, optin = 0, blocks_sm = 0, pools = 0, regs_sm = 0;
  CHECK(cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, 0));
  CHECK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0));
  CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CHECK(cudaDeviceGetAttribute(&blocks_sm, cudaDevAttrMaxBlocksPerMultiprocessor, 0));
  CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
  CHECK(cudaDeviceGetAttribute(&regs_sm, cudaDevAttrMaxRegistersPerMultiprocessor, 0));
  printf("attrs integrated=%d prohibited=%d optin=%d blocks_sm=%d pools=%d regs_sm=%d\n", integrated,
         (int)(mode == cudaComputeModeProhibited), optin, blocks_sm, pools, regs_sm);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("prop optin=%zu pools=%d host_atomics=%d\n", prop.sharedMemPerBlockOptin, prop.memoryPoolsSupported,
         prop.hostNativeAtomicSupported);
  // The persisting-L2 limits an sm_80 device reports (programs check them before setting an
  // access-policy window), the attributes alike, and the limit as set (clamped to the maximum).
  int persist = 0, window = 0;
  size_t set_limit = 0;
  CHECK(cudaDeviceGetAttribute(&persist, cudaDevAttrMaxPersistingL2CacheSize, 0));
  CHECK(cudaDeviceGetAttribute(&window, cudaDevAttrMaxAccessPolicyWindowSize, 0));
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, prop.persistingL2CacheMaxSize));
  CHECK(cudaDeviceGetLimit(&set_limit, cudaLimitPersistingL2CacheSize));
  printf("persisting_l2 max=%d window=%d attrs_agree=%d limit_set=%d\n", prop.persistingL2CacheMaxSize > 0,
         prop.accessPolicyMaxWindowSize > 0, persist == prop.persistingL2CacheMaxSize &&
         window == prop.accessPolicyMaxWindowSize, set_limit == (size_t)prop.persistingL2CacheMaxSize);
  int p2p = 0;
  printf("p2p_same_device %s\n", cudaGetErrorName(cudaDeviceGetP2PAttribute(&p2p, cudaDevP2PAttrAccessSupported, 0, 0)));
  cudaGetLastError();
  CHECK(cudaDeviceDisablePeerAccess(0));
  CHECK(cudaCtxResetPersistingL2Cache());

  // Pinned host memory flags.
  float* h;
  CHECK(cudaHostAlloc(&h, 64, cudaHostAllocPortable));
  unsigned hflags = 0;
  CHECK(cudaHostGetFlags(&hflags, h));
  printf("host_flags portable=%d mapped=%d\n", (int)((hflags & cudaHostAllocPortable) != 0),
         (int)((hflags & cudaHostAllocMapped) != 0));
  CHECK(cudaFreeHost(h));

  // 2D/3D fills and peer copies on the one device.
  size_t pitch = 0;
  unsigned char* d2;
  CHECK(cudaMallocPitch(&d2, &pitch, 10, 4));
  CHECK(cudaMemset2DAsync(d2, pitch, 0, pitch, 4, s));
  CHECK(cudaMemset2DAsync(d2, pitch, 7, 5, 3, s));
  unsigned char h2[4 * 10];
  CHECK(cudaMemcpy2D(h2, 10, d2, pitch, 10, 4, cudaMemcpyDeviceToHost));
  int sevens = 0;
  for (int i = 0; i < 40; ++i) sevens += h2[i] == 7;
  printf("memset2d sevens=%d\n", sevens);
  cudaExtent ext = make_cudaExtent(6, 3, 2);
  cudaPitchedPtr p3;
  CHECK(cudaMalloc3D(&p3, make_cudaExtent(8, 4, 3)));
  CHECK(cudaMemset3D(p3, 0, make_cudaExtent(8, 4, 3)));
  CHECK(cudaMemset3DAsync(p3, 9, ext, s));
  unsigned char h3[3][4][8];
  cudaMemcpy3DParms cp;
  memset(&cp, 0, sizeof cp);
  cp.srcPtr = p3;
  cp.dstPtr = make_cudaPitchedPtr(h3, 8, 8, 4);
  cp.extent = make_cudaExtent(8, 4, 3);
  cp.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&cp));
  int nines = 0;
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 8; ++x) nines += h3[z][y][x] == 9;
  printf("memset3d nines=%d\n", nines);
  float* a;
  float* b;
  CHECK(cudaMalloc(&a, 16 * sizeof(float)));
  CHECK(cudaMalloc(&b, 16 * sizeof(float)));
  CHECK(cudaMemcpy(a, m, 16 * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyPeerAsync(b, 0, a, 0, 16 * sizeof(float), s));
  float hb[16];
  CHECK(cudaMemcpy(hb, b, sizeof hb, cudaMemcpyDeviceToHost));
  printf("peer %.0f %.0f\n", hb[0], hb[15]);

  // Stream-ordered allocation pools.
  cudaMemPool_t def, cur;
  CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
  CHECK(cudaDeviceGetMemPool(&cur, 0));
  printf("pool current_is_default=%d\n", (int)(def == cur));
  unsigned long long threshold = ~0ull;
  CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
  cudaMemPoolProps props;
  memset(&props, 0, sizeof props);
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  cudaMemAccessDesc acc;
  acc.location = props.location;
  acc.flags = cudaMemAccessFlagsProtReadWrite;
  CHECK(cudaMemPoolSetAccess(pool, &acc, 1));
  cudaMemAccessFlags af;
  CHECK(cudaMemPoolGetAccess(&af, pool, &props.location));
  float* pa;
  float* pb;
  CHECK(cudaMallocFromPoolAsync(&pa, 4096, pool, s));
  CHECK(cudaMallocAsync(&pb, 1024, pool, s));
  unsigned long long used = 0, high = 0;
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  printf("pool used=%llu access_rw=%d\n", used, (int)(af == cudaMemAccessFlagsProtReadWrite));
  CHECK(cudaMemsetAsync(pa, 0, 4096, s));
  add_one<<<4, 256, 0, s>>>(pa, 1024);
  float hp[1024];
  CHECK(cudaMemcpyAsync(hp, pa, sizeof hp, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  printf("pool kernel %.0f %.0f\n", hp[0], hp[1023]);
  CHECK(cudaFreeAsync(pa, s));
  CHECK(cudaFreeAsync(pb, s));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  printf("pool after_free used=%llu high=%llu\n", used, high);
  CHECK(cudaDeviceSetMemPool(0, pool));
  float* pc;
  CHECK(cudaMallocAsync(&pc, 256, s));
  CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  printf("pool via_device used=%llu\n", used);
  CHECK(cudaFree(pc));
  CHECK(cudaMemPoolTrimTo(pool, 0));
  CHECK(cudaDeviceSetMemPool(0, def));
  CHECK(cudaMemPoolDestroy(pool));

  // Stream attributes: an L2 access policy window, kept and copied to another stream.
  cudaStreamAttrValue win;
  memset(&win, 0, sizeof win);
  win.accessPolicyWindow.base_ptr = a;
  win.accessPolicyWindow.num_bytes = 16 * sizeof(float);
  win.accessPolicyWindow.hitRatio = 0.5f;
  win.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  win.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &win));
  CHECK(cudaStreamCopyAttributes(s2, s));
  cudaStreamAttrValue back;
  CHECK(cudaStreamGetAttribute(s2, cudaStreamAttributeAccessPolicyWindow, &back));
  printf("stream_attr bytes=%zu same_base=%d\n", back.accessPolicyWindow.num_bytes,
         (int)(back.accessPolicyWindow.base_ptr == a));

  CHECK(cudaStreamDestroy(s));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(out));
  CHECK(cudaFree(m));
  CHECK(cudaFree(d2));
  CHECK(cudaFree(p3.ptr));
  printf("done\n");
  return 0;
}
