/* A stand-in for NVIDIA's libnvidia-ml.so.1, for tests on machines without an NVIDIA GPU.
 *
 * It exports only the calls compare-tui's GPU sampler makes through the real nvidia-ml-py
 * (pynvml loads it with ctypes, by its soname, as it would load the driver's library), with
 * the signatures and error codes of nvml.h. What it reports is read, at each call, from the
 * folder named by $COMPARE_TUI_FAKE_NVML:
 *
 *   devices       one line per GPU: "UUID TOTAL_MIB NAME…" (no file, or empty: no GPU)
 *   used.I        device I's used bytes, whitespace-separated; each memory read takes the next
 *                 value, the last repeats (a scripted ramp)
 *   init_error    an NVML return code nvmlInitWithFlags gives instead of success
 *   memory_error  a code both memory calls give (3: not supported, 13: function not found)
 *   v2_error      a code only nvmlDeviceGetMemoryInfo_v2 gives (the v1 call still answers)
 *   lost          while this file exists every memory read gives 15 (GPU is lost)
 *
 * Built with -DNO_MEMORY_V2 it has no nvmlDeviceGetMemoryInfo_v2 at all (a driver older than
 * the versioned call), so pynvml itself raises NVMLError_FunctionNotFound.
 * Never shipped: tests/support/fake_nvml.py compiles it into a temp folder once per test run.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999
#define NVML_MEMORY_V2 0x02000028u
#define MAX_DEVICES 16

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialised = 0;
static unsigned long positions[MAX_DEVICES];

static const char *folder(void) {
    const char *dir = getenv("COMPARE_TUI_FAKE_NVML");
    return dir ? dir : ".";
}

/* The file's first line into buf; 0 when there is no such file. */
static int read_file(const char *name, char *buf, size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", folder(), name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 1;
}

static int file_code(const char *name) {
    char buf[64];
    return read_file(name, buf, sizeof buf) ? atoi(buf) : NVML_SUCCESS;
}

static int exists(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", folder(), name);
    return access(path, F_OK) == 0;
}

/* Device `index`'s line of `devices` split into uuid, total and name; 0 when absent. */
static int device_line(unsigned int index, char *uuid, size_t uuid_size, unsigned long long *total_mib,
                       char *name, size_t name_size) {
    char text[8192];
    if (!read_file("devices", text, sizeof text)) return 0;
    char *line = text;
    for (unsigned int i = 0; line && *line; i++) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        if (i == index) {
            char u[128] = "", n[256] = "";
            unsigned long long t = 0;
            if (sscanf(line, "%127s %llu %255[^\n]", u, &t, n) < 2) return 0;
            if (uuid) snprintf(uuid, uuid_size, "%s", u);
            if (total_mib) *total_mib = t;
            if (name) snprintf(name, name_size, "%s", n);
            return 1;
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

static unsigned int device_count(void) {
    unsigned int n = 0;
    while (n < MAX_DEVICES && device_line(n, NULL, 0, NULL, NULL, 0)) n++;
    return n;
}

static int index_of(nvmlDevice_t device, unsigned int *index) {
    uintptr_t value = (uintptr_t)device;
    if (value == 0 || value > MAX_DEVICES) return 0;
    *index = (unsigned int)(value - 1);
    return 1;
}

/* The next scripted reading of device `index`, in bytes. */
static unsigned long long next_used(unsigned int index) {
    char name[32], text[65536];
    snprintf(name, sizeof name, "used.%u", index);
    if (!read_file(name, text, sizeof text)) return 0;
    unsigned long long value = 0;
    unsigned long k = 0;
    char *rest = text, *token;
    while ((token = strtok_r(rest, " \t\r\n", &rest)) != NULL) {
        value = strtoull(token, NULL, 10);
        if (k++ == positions[index]) break;
    }
    positions[index]++;
    return value;
}

/* Shared by both memory calls: the device's total and its next used reading. */
static nvmlReturn_t memory(nvmlDevice_t device, unsigned long long *total, unsigned long long *used) {
    unsigned int index;
    unsigned long long total_mib = 0;
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!index_of(device, &index) || !device_line(index, NULL, 0, &total_mib, NULL, 0))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (exists("lost")) return NVML_ERROR_GPU_IS_LOST;
    nvmlReturn_t code = file_code("memory_error");
    if (code != NVML_SUCCESS) return code;
    *total = total_mib << 20;
    *used = next_used(index);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    nvmlReturn_t code = file_code("init_error");
    if (code != NVML_SUCCESS) return code;
    pthread_mutex_lock(&lock);
    if (initialised++ == 0) memset(positions, 0, sizeof positions);
    pthread_mutex_unlock(&lock);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }

nvmlReturn_t nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    nvmlReturn_t code = initialised ? (initialised--, NVML_SUCCESS) : NVML_ERROR_UNINITIALIZED;
    pthread_mutex_unlock(&lock);
    return code;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = device_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= device_count()) return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(uintptr_t)(index + 1);
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_out(const char *text, char *out, unsigned int length) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(out, text);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    return copy_out("555.42.06-fake", version, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    unsigned int index;
    char text[256];
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!index_of(device, &index) || !device_line(index, NULL, 0, NULL, text, sizeof text))
        return NVML_ERROR_INVALID_ARGUMENT;
    return copy_out(text, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    unsigned int index;
    char text[128];
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!index_of(device, &index) || !device_line(index, text, sizeof text, NULL, NULL, 0))
        return NVML_ERROR_INVALID_ARGUMENT;
    return copy_out(text, uuid, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *out) {
    unsigned long long total = 0, used = 0;
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    nvmlReturn_t code = memory(device, &total, &used);
    pthread_mutex_unlock(&lock);
    if (code != NVML_SUCCESS) return code;
    /* v1 counts driver-reserved memory as used (300 MiB here), as the real call does. */
    out->total = total;
    out->used = used + (300ull << 20);
    out->free = total > out->used ? total - out->used : 0;
    return NVML_SUCCESS;
}

#ifndef NO_MEMORY_V2
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *out) {
    unsigned long long total = 0, used = 0;
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (out->version != NVML_MEMORY_V2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlReturn_t code = file_code("v2_error");
    if (code != NVML_SUCCESS) return code;
    pthread_mutex_lock(&lock);
    code = memory(device, &total, &used);
    pthread_mutex_unlock(&lock);
    if (code != NVML_SUCCESS) return code;
    out->total = total;
    out->reserved = 300ull << 20;
    out->used = used;
    out->free = total > used + out->reserved ? total - used - out->reserved : 0;
    return NVML_SUCCESS;
}
#endif

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    case 13: return "Function Not Found";
    case 15: return "GPU is lost";
    case 25: return "Argument version mismatch";
    default: return "Unknown Error (fake NVML)";
    }
}
