/* Prints the cooperative-matrix properties of each Vulkan device as coopmat-val profile JSON.
 * Self-contained (no Vulkan headers): the few structures it needs are declared here from the
 * Vulkan registry's layouts. Build: cc -O1 -o vkcoopmat_probe vkcoopmat_probe.c -ldl */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint32_t u32;
typedef void *(*PFN_gipa)(void *, const char *);
typedef struct { u32 sType; const void *pNext; const char *app; u32 appv; const char *eng; u32 engv; u32 api; } AppInfo;
typedef struct { u32 sType; const void *pNext; u32 flags; const AppInfo *app; u32 nl; const char *const *l; u32 ne; const char *const *e; } InstInfo;
typedef struct { u32 sType; void *pNext; u32 M, N, K, A, B, C, R, sat, scope; } CmProps;
typedef struct { u32 sType; void *pNext; u32 MG, NG, KG, A, B, C, R, sat, scope, wgInv; } FlexProps;
typedef struct { u32 sType; void *pNext; u32 subgroupSize, stages, ops, quad; } SubgroupProps;
typedef struct { u32 sType; void *pNext; u32 wgMax, flexMax, reserved; } Cm2Props;
typedef struct { u32 sType; void *pNext; u32 stages; } CmKhrProps;
typedef struct { u32 sType; void *pNext; u32 f[7]; } Cm2Feats;
typedef struct { u32 sType; void *pNext; unsigned char props[1024]; } Props2;
typedef struct { u32 sType; void *pNext; u32 feats[64]; } Feats2;

static const char *ct(u32 t) {
  switch (t) {
  case 0: return "float16"; case 1: return "float32"; case 2: return "float64";
  case 3: return "sint8"; case 4: return "sint16"; case 5: return "sint32"; case 6: return "sint64";
  case 7: return "uint8"; case 8: return "uint16"; case 9: return "uint32"; case 10: return "uint64";
  case 1000141000: return "bfloat16";
  case 1000491002: return "float8_e4m3"; case 1000491003: return "float8_e5m2";
  case 1000567000: return "sint8_packed"; case 1000567001: return "uint8_packed";
  default: return "unknown";
  }
}
static const char *scope(u32 s) { return s == 2 ? "workgroup" : s == 3 ? "subgroup" : s == 1 ? "device" : "queue_family"; }

int main(void) {
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW);
  if (!lib) { fprintf(stderr, "no libvulkan.so.1\n"); return 1; }
  PFN_gipa gipa = (PFN_gipa)dlsym(lib, "vkGetInstanceProcAddr");
  AppInfo app = {0, 0, "probe", 1, "probe", 1, (1u << 22) | (3u << 12)};
  InstInfo ii = {1, 0, 0, &app, 0, 0, 0, 0};
  void *inst = 0;
  int (*create)(const InstInfo *, const void *, void **) = (int (*)(const InstInfo *, const void *, void **))gipa(0, "vkCreateInstance");
  if (create(&ii, 0, &inst) != 0) { fprintf(stderr, "vkCreateInstance failed\n"); return 1; }
  int (*enumerate)(void *, u32 *, void **) = (int (*)(void *, u32 *, void **))gipa(inst, "vkEnumeratePhysicalDevices");
  int (*cmprops)(void *, u32 *, CmProps *) = (int (*)(void *, u32 *, CmProps *))gipa(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  int (*flexprops)(void *, u32 *, FlexProps *) = (int (*)(void *, u32 *, FlexProps *))gipa(inst, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
  void (*props2)(void *, Props2 *) = (void (*)(void *, Props2 *))gipa(inst, "vkGetPhysicalDeviceProperties2");
  void (*feats2)(void *, Feats2 *) = (void (*)(void *, Feats2 *))gipa(inst, "vkGetPhysicalDeviceFeatures2");
  u32 n = 0; void *devs[8];
  enumerate(inst, &n, 0); if (n > 8) n = 8; enumerate(inst, &n, devs);
  printf("[\n");
  for (u32 d = 0; d < n; d++) {
    SubgroupProps sg = {1000094000, 0};
    Cm2Props cm2 = {1000593002, &sg};
    CmKhrProps ck = {1000506002, &cm2};
    Props2 p = {1000059001, &ck};
    memset(p.props, 0, sizeof p.props);
    props2(devs[d], &p);
    Cm2Feats f2 = {1000593000, 0};
    Feats2 f = {1000059000, &f2};
    feats2(devs[d], &f);
    u32 api = *(u32 *)p.props, drv = *(u32 *)(p.props + 4);
    printf("{\"device\": \"%s\", \"api_version\": \"%u.%u.%u\", \"driver_version_raw\": %u,\n", (const char *)(p.props + 20), api >> 22, (api >> 12) & 0x3ff, api & 0xfff, drv);
    printf(" \"subgroup_size\": %u, \"cooperative_matrix_supported_stages_mask\": %u,\n", sg.subgroupSize, ck.stages);
    printf(" \"features\": {\"workgroup_scope\": %u, \"flexible_dimensions\": %u, \"reductions\": %u, \"conversions\": %u, \"per_element_operations\": %u, \"tensor_addressing\": %u, \"block_loads\": %u},\n",
           f2.f[0], f2.f[1], f2.f[2], f2.f[3], f2.f[4], f2.f[5], f2.f[6]);
    printf(" \"workgroup_scope_max_workgroup_size\": %u, \"flexible_dimensions_max_dimension\": %u, \"workgroup_scope_reserved_shared_memory\": %u,\n", cm2.wgMax, cm2.flexMax, cm2.reserved);
    u32 c = 0; CmProps cp[256];
    if (cmprops) { cmprops(devs[d], &c, 0); if (c > 256) c = 256; for (u32 k = 0; k < c; k++) { cp[k].sType = 1000506001; cp[k].pNext = 0; } cmprops(devs[d], &c, cp); }
    printf(" \"cooperative_matrix\": [\n");
    for (u32 k = 0; k < c; k++)
      printf("  {\"M\": %u, \"N\": %u, \"K\": %u, \"A\": \"%s\", \"B\": \"%s\", \"C\": \"%s\", \"Result\": \"%s\", \"saturating\": %s, \"scope\": \"%s\"}%s\n",
             cp[k].M, cp[k].N, cp[k].K, ct(cp[k].A), ct(cp[k].B), ct(cp[k].C), ct(cp[k].R), cp[k].sat ? "true" : "false", scope(cp[k].scope), k + 1 < c ? "," : "");
    printf(" ],\n \"flexible_dimensions\": [\n");
    u32 fc = 0; FlexProps fp[256];
    if (flexprops && f2.f[1]) { flexprops(devs[d], &fc, 0); if (fc > 256) fc = 256; for (u32 k = 0; k < fc; k++) { fp[k].sType = 1000593001; fp[k].pNext = 0; } flexprops(devs[d], &fc, fp); }
    for (u32 k = 0; k < fc; k++)
      printf("  {\"M_granularity\": %u, \"N_granularity\": %u, \"K_granularity\": %u, \"A\": \"%s\", \"B\": \"%s\", \"C\": \"%s\", \"Result\": \"%s\", \"saturating\": %s, \"scope\": \"%s\", \"workgroup_invocations\": %u}%s\n",
             fp[k].MG, fp[k].NG, fp[k].KG, ct(fp[k].A), ct(fp[k].B), ct(fp[k].C), ct(fp[k].R), fp[k].sat ? "true" : "false", scope(fp[k].scope), fp[k].wgInv, k + 1 < fc ? "," : "");
    printf(" ]}%s\n", d + 1 < n ? "," : "");
  }
  printf("]\n");
  return 0;
}
