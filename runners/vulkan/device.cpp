#include "device.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

namespace simt::vulkan {

namespace {

const char* vk_result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_INCOMPLETE:
      return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
      return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
      return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV:
      return "VK_ERROR_INVALID_SHADER_NV";
    default:
      return "VkResult";
  }
}

Error vk_error(const char* what, VkResult r) {
  Error e;
  e.kind = r == VK_ERROR_DEVICE_LOST ? Error::Kind::DeviceLost : Error::Kind::Vulkan;
  e.message = std::string(what) + " failed: " + vk_result_name(r) + " (" + std::to_string(r) + ")";
  e.vk_result = r;
  return e;
}

Error error(Error::Kind kind, std::string message) {
  return make_error(kind, std::move(message));
}

Error closed() {
  return error(Error::Kind::NoDevice, "the Vulkan device was closed at exit");
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

bool has_extension(VkPhysicalDevice pd, std::string_view name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data()) != VK_SUCCESS) {
    return false;
  }
  return std::any_of(exts.begin(), exts.begin() + n,
                     [&](const VkExtensionProperties& e) { return name == e.extensionName; });
}

// A compute queue family of `pd`, preferring one without graphics.
std::optional<uint32_t> compute_family(VkPhysicalDevice pd) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
  std::optional<uint32_t> any;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || fams[i].queueCount == 0) continue;
    if (!(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) return i;
    if (!any) any = i;
  }
  return any;
}

}  // namespace

// ---- DeviceInfo ------------------------------------------------------------------

std::string SubgroupInfo::operation_names() const {
  static const char* const kNames[] = {
      "basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative", "clustered", "quad"};
  std::string s;
  for (uint32_t bit = 0; bit < 8; ++bit) {
    if (!(operations & (1u << bit))) continue;
    if (!s.empty()) s += ' ';
    s += kNames[bit];
  }
  return s;
}

std::string DeviceInfo::api_version_string() const {
  return version_string(api_version);
}

std::string DeviceInfo::type_name() const {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_OTHER:
      return "other";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    case VK_PHYSICAL_DEVICE_TYPE_MAX_ENUM:
      break;
  }
  return "unknown";
}

std::vector<uint32_t> SubgroupInfo::sizes() const {
  std::vector<uint32_t> out{size};
  if (size_control) {
    for (uint32_t w = 1; w <= 128 && w <= max_size; w *= 2)
      if (w >= min_size && w != size) out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- Device ------------------------------------------------------------------------

Result<Device*> Device::get() {
  // The Device object is never deleted; at exit the logical device is destroyed if
  // nothing is running or alive on it (see "Exit" below).
  static Device* device = nullptr;
  static const std::optional<Error> failure = []() -> std::optional<Error> {
    try {
      device = new Device();
      Status s = device->init();
      if (!s.ok()) return s.error();
      return std::nullopt;
    } catch (const std::exception& ex) {
      return error(Error::Kind::Internal, std::string("creating the Vulkan device: ") + ex.what());
    }
  }();
  // Registered after the driver's own exit handlers, so it runs before them.
  static const struct AtExit {
    ~AtExit() {
      if (device != nullptr) device->close_if_idle();
    }
  } at_exit;
  if (failure) return *failure;
  return device;
}

namespace {

// Creates an instance for Vulkan 1.2 (NoDevice when the loader or driver cannot).
Result<VkInstance> create_instance() {
  uint32_t loader_version = 0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS ||
      loader_version < VK_API_VERSION_1_2) {
    return error(Error::Kind::NoDevice,
                 "the Vulkan loader is older than 1.2 (" + version_string(loader_version) + ")");
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "simtspec";
  app.applicationVersion = 1;
  app.pEngineName = "simtspec-vulkan";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  VkResult r = vkCreateInstance(&ici, nullptr, &instance);
  if (r != VK_SUCCESS) {
    return error(
        Error::Kind::NoDevice,
        std::string("vkCreateInstance failed: ") + vk_result_name(r) +
            (r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no driver found; is VK_ICD_FILENAMES right?)"
                                               : ""));
  }
  return instance;
}

Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance) {
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(instance, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  if (r == VK_SUCCESS && n > 0) r = vkEnumeratePhysicalDevices(instance, &n, pds.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    return error(Error::Kind::NoDevice,
                 std::string("vkEnumeratePhysicalDevices failed: ") + vk_result_name(r));
  }
  pds.resize(n);
  return pds;
}

// What a physical device reports before a logical device exists: its properties,
// and the optional features the runner enables where present.
struct Queried {
  DeviceInfo info;
  bool size_control_ext = false;  // VK_EXT_subgroup_size_control on a Vulkan 1.2 device
  bool size_control = false;      // Vulkan 1.3 or the extension
  VkPhysicalDeviceSubgroupSizeControlFeatures size_feat{};
  VkPhysicalDeviceVulkan12Features f12{};
  VkPhysicalDeviceVulkan11Features f11{};
  VkPhysicalDeviceFeatures2 feats{};
};

void query(VkPhysicalDevice pd, Queried& q) {
  // Properties: limits, driver, subgroups.
  VkPhysicalDeviceSubgroupSizeControlProperties size_props{};
  size_props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES;
  VkPhysicalDeviceSubgroupProperties sub_props{};
  sub_props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceDriverProperties driver_props{};
  driver_props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  sub_props.pNext = &driver_props;
  VkPhysicalDeviceProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props.pNext = &sub_props;
  vkGetPhysicalDeviceProperties(pd, &props.properties);
  const uint32_t api = props.properties.apiVersion;
  q.size_control_ext =
      api < VK_API_VERSION_1_3 && has_extension(pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  q.size_control = api >= VK_API_VERSION_1_3 || q.size_control_ext;
  if (q.size_control) driver_props.pNext = &size_props;
  vkGetPhysicalDeviceProperties2(pd, &props);
  const VkPhysicalDeviceLimits& lim = props.properties.limits;
  DeviceInfo& info = q.info;
  info.name = props.properties.deviceName;
  info.driver = std::string(driver_props.driverName) + " " + driver_props.driverInfo;
  info.api_version = api;
  info.driver_version = props.properties.driverVersion;
  info.driver_id = driver_props.driverID;
  info.type = props.properties.deviceType;
  info.max_workgroup_size_x = lim.maxComputeWorkGroupSize[0];
  info.max_workgroup_invocations = lim.maxComputeWorkGroupInvocations;
  info.max_workgroup_count_x = lim.maxComputeWorkGroupCount[0];
  info.max_shared_memory = lim.maxComputeSharedMemorySize;
  info.max_storage_buffers = lim.maxPerStageDescriptorStorageBuffers;
  info.max_storage_buffer_range = lim.maxStorageBufferRange;
  info.subgroup.size = sub_props.subgroupSize;
  info.subgroup.min_size = q.size_control ? size_props.minSubgroupSize : sub_props.subgroupSize;
  info.subgroup.max_size = q.size_control ? size_props.maxSubgroupSize : sub_props.subgroupSize;
  info.subgroup.operations =
      (sub_props.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? sub_props.supportedOperations : 0;

  // Features: the optional ones the runner may use.
  q.size_feat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  q.f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  q.f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  q.f11.pNext = &q.f12;
  if (q.size_control) q.f12.pNext = &q.size_feat;
  q.feats.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  q.feats.pNext = &q.f11;
  vkGetPhysicalDeviceFeatures2(pd, &q.feats);
  q.f12.pNext = nullptr;  // the chain points into q; a copy must not follow it
  q.f11.pNext = nullptr;
  q.feats.pNext = nullptr;
  info.subgroup.full_subgroups = q.size_feat.computeFullSubgroups;
  info.subgroup.size_control =
      q.size_feat.subgroupSizeControl &&
      (size_props.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT);
  info.int64 = q.feats.features.shaderInt64;
  info.int16 = q.feats.features.shaderInt16;
  info.int8 = q.f12.shaderInt8;
  info.storage_8bit = q.f12.storageBuffer8BitAccess;
  info.storage_16bit = q.f11.storageBuffer16BitAccess;
}

// Empty when the runner can use `pd`, else why not.
std::string unusable(VkPhysicalDevice pd, const DeviceInfo& info) {
  if (info.api_version < VK_API_VERSION_1_2) return "Vulkan " + version_string(info.api_version);
  if (!compute_family(pd)) return "no compute queue";
  return "";
}

std::optional<uint32_t>& selected_index() {
  static std::optional<uint32_t> index;
  return index;
}

}  // namespace

void Device::select(uint32_t index) {
  selected_index() = index;
}

Result<std::vector<DeviceSummary>> list_devices() {
  auto instance = create_instance();
  if (!instance.ok()) return instance.error();
  std::vector<DeviceSummary> out;
  auto pds = physical_devices(*instance);
  if (pds.ok()) {
    for (uint32_t i = 0; i < pds->size(); ++i) {
      Queried q;
      query((*pds)[i], q);
      out.push_back({i, q.info, unusable((*pds)[i], q.info)});
    }
  }
  // The instance is not destroyed, as the device's is not (see "Exit" below):
  // destroying it unloads lavapipe, and LeakSanitizer then reports the 128 bytes Mesa
  // 22.3.6 loses. A process lists the devices once (--info, the probe).
  if (!pds.ok()) return pds.error();
  return out;
}

Status Device::init() {
  auto instance = create_instance();
  if (!instance.ok()) return instance.error();
  instance_ = *instance;
  auto pds = physical_devices(instance_);
  if (!pds.ok()) return pds.error();
  const uint32_t n = static_cast<uint32_t>(pds->size());
  std::string rejected;
  Queried q;
  if (auto want = selected_index()) {
    if (*want >= n)
      return error(Error::Kind::NoDevice, "--device " + std::to_string(*want) +
                                              ": the loader lists " + std::to_string(n) +
                                              " devices (simtspec-vulkan --info)");
    query((*pds)[*want], q);
    if (std::string why = unusable((*pds)[*want], q.info); !why.empty())
      return error(Error::Kind::NoDevice,
                   "--device " + std::to_string(*want) + " (" + q.info.name + ") has " + why);
    physical_ = (*pds)[*want];
  }
  for (uint32_t i = 0; i < n && physical_ == VK_NULL_HANDLE; ++i) {
    query((*pds)[i], q);
    if (std::string why = unusable((*pds)[i], q.info); why.empty()) {
      physical_ = (*pds)[i];
    } else {
      rejected += std::string(rejected.empty() ? " (" : ", ") + q.info.name + ": " + why;
    }
  }
  if (physical_ == VK_NULL_HANDLE) {
    return error(Error::Kind::NoDevice, "none with Vulkan 1.2 and a compute queue" +
                                            (rejected.empty() ? "" : rejected + ")"));
  }
  queue_family_ = *compute_family(physical_);
  info_ = q.info;
  const bool size_control_ext = q.size_control_ext;

  // The optional features, enabled when present.
  VkPhysicalDeviceSubgroupSizeControlFeatures size_on{};
  size_on.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES;
  size_on.computeFullSubgroups = q.size_feat.computeFullSubgroups;
  size_on.subgroupSizeControl = q.size_feat.subgroupSizeControl;
  VkPhysicalDeviceVulkan12Features on12{};
  on12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  on12.shaderInt8 = q.f12.shaderInt8;
  on12.storageBuffer8BitAccess = q.f12.storageBuffer8BitAccess;
  const bool any_size_feature = size_on.computeFullSubgroups || size_on.subgroupSizeControl;
  if (any_size_feature) on12.pNext = &size_on;
  VkPhysicalDeviceVulkan11Features on11{};
  on11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  on11.storageBuffer16BitAccess = q.f11.storageBuffer16BitAccess;
  on11.pNext = &on12;
  VkPhysicalDeviceFeatures2 on{};
  on.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  on.features.shaderInt64 = q.feats.features.shaderInt64;
  on.features.shaderInt16 = q.feats.features.shaderInt16;
  on.pNext = &on11;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = queue_family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  const char* ext = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &on;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  if (size_control_ext && any_size_feature) {
    dci.enabledExtensionCount = 1;
    dci.ppEnabledExtensionNames = &ext;
  }
  VkResult r = vkCreateDevice(physical_, &dci, nullptr, &device_);
  if (r != VK_SUCCESS) {
    device_ = VK_NULL_HANDLE;
    return error(Error::Kind::NoDevice,
                 "vkCreateDevice on " + info_.name + " failed: " + vk_result_name(r));
  }
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = queue_family_;
  if ((r = vkCreateCommandPool(device_, &pci, nullptr, &command_pool_)) != VK_SUCCESS) {
    command_pool_ = VK_NULL_HANDLE;
    return vk_error("vkCreateCommandPool", r);
  }
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = command_pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  if ((r = vkAllocateCommandBuffers(device_, &cai, &command_buffer_)) != VK_SUCCESS) {
    command_buffer_ = VK_NULL_HANDLE;
    return vk_error("vkAllocateCommandBuffers", r);
  }
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if ((r = vkCreateFence(device_, &fci, nullptr, &fence_)) != VK_SUCCESS) {
    fence_ = VK_NULL_HANDLE;
    return vk_error("vkCreateFence", r);
  }
  return {};
}

// Exit: when the process ends, the logical device is destroyed if no dispatch is
// running, it was not lost, and no buffer or pipeline is alive (else destroying it
// would be invalid, and a timed-out shader must not be waited for on the way out).
// The instance is never destroyed: that unloads lavapipe, after which
// LeakSanitizer reports 128 bytes Mesa 22.3.6 lost (a bare vkCreateInstance,
// vkEnumeratePhysicalDevices, vkDestroyInstance does that too). The device is
// destroyed rather than left because LeakSanitizer does not see pointers lavapipe
// keeps in memory it maps itself, and reports what they hold.
void Device::close_if_idle() {
  std::lock_guard<std::mutex> lock(mu_);
  if (device_ == VK_NULL_HANDLE) return;
  poll_locked();
  if (pending_ || lost_ || live_objects_ != 0) return;
  vkDeviceWaitIdle(device_);
  if (fence_ != VK_NULL_HANDLE) vkDestroyFence(device_, fence_, nullptr);
  if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, command_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
  fence_ = VK_NULL_HANDLE;
  command_pool_ = VK_NULL_HANDLE;
  command_buffer_ = VK_NULL_HANDLE;
}

bool Device::busy() {
  std::lock_guard<std::mutex> lock(mu_);
  poll_locked();
  return pending_;
}

void Device::count_live() {
  std::lock_guard<std::mutex> lock(mu_);
  ++live_objects_;
}

size_t Device::retired_objects() {
  std::lock_guard<std::mutex> lock(mu_);
  const Graveyard& g = graveyard_;
  return g.buffers.size() + g.memories.size() + g.modules.size() + g.set_layouts.size() +
         g.layouts.size() + g.pipelines.size() + g.pools.size();
}

void Device::poll_locked() {
  if (!pending_ || lost_) return;
  VkResult r = vkGetFenceStatus(device_, fence_);
  if (r == VK_SUCCESS) {
    pending_ = false;
    destroy_graveyard_locked();
  } else if (r != VK_NOT_READY) {
    lost_ = true;  // VK_ERROR_DEVICE_LOST is the only other result
  }
}

void Device::destroy_graveyard_locked() {
  Graveyard& g = graveyard_;
  for (VkDescriptorPool x : g.pools) vkDestroyDescriptorPool(device_, x, nullptr);
  for (VkPipeline x : g.pipelines) vkDestroyPipeline(device_, x, nullptr);
  for (VkPipelineLayout x : g.layouts) vkDestroyPipelineLayout(device_, x, nullptr);
  for (VkDescriptorSetLayout x : g.set_layouts) vkDestroyDescriptorSetLayout(device_, x, nullptr);
  for (VkShaderModule x : g.modules) vkDestroyShaderModule(device_, x, nullptr);
  for (VkBuffer x : g.buffers) vkDestroyBuffer(device_, x, nullptr);
  for (VkDeviceMemory x : g.memories) vkFreeMemory(device_, x, nullptr);  // unmaps too
  g = Graveyard{};
}

namespace {
template <class T>
void keep(std::vector<T>& v, T handle) {
  if (handle != VK_NULL_HANDLE) v.push_back(handle);
}
}  // namespace

void Device::release(VkBuffer buffer, VkDeviceMemory memory) {
  std::lock_guard<std::mutex> lock(mu_);
  --live_objects_;
  poll_locked();
  if (pending_ || lost_) {
    try {
      keep(graveyard_.buffers, buffer);
      keep(graveyard_.memories, memory);
    } catch (const std::exception&) {
      // Out of memory: the objects are lost to this process, which is ending anyway.
    }
    return;
  }
  if (buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, buffer, nullptr);
  if (memory != VK_NULL_HANDLE) vkFreeMemory(device_, memory, nullptr);  // unmaps too
}

void Device::release(VkShaderModule module, VkDescriptorSetLayout set_layout,
                     VkPipelineLayout layout, VkPipeline pipeline, VkDescriptorPool pool) {
  std::lock_guard<std::mutex> lock(mu_);
  --live_objects_;
  poll_locked();
  if (pending_ || lost_) {
    try {
      keep(graveyard_.modules, module);
      keep(graveyard_.set_layouts, set_layout);
      keep(graveyard_.layouts, layout);
      keep(graveyard_.pipelines, pipeline);
      keep(graveyard_.pools, pool);
    } catch (const std::exception&) {
    }
    return;
  }
  if (pool != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, pool, nullptr);  // frees the set
  if (pipeline != VK_NULL_HANDLE) vkDestroyPipeline(device_, pipeline, nullptr);
  if (layout != VK_NULL_HANDLE) vkDestroyPipelineLayout(device_, layout, nullptr);
  if (set_layout != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device_, set_layout, nullptr);
  if (module != VK_NULL_HANDLE) vkDestroyShaderModule(device_, module, nullptr);
}

// ---- buffers -------------------------------------------------------------------------

Result<Buffer> Device::create_buffer(size_t bytes) {
  if (device_ == VK_NULL_HANDLE) return closed();
  if (bytes == 0) return error(Error::Kind::InvalidArgument, "a buffer of 0 bytes");
  if (bytes > info_.max_storage_buffer_range) {
    return error(Error::Kind::Unsupported, "a buffer of " + std::to_string(bytes) +
                                               " bytes is larger than maxStorageBufferRange (" +
                                               std::to_string(info_.max_storage_buffer_range) +
                                               ")");
  }
  Buffer b;
  b.device_ = this;
  count_live();
  b.size_ = bytes;
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = bytes;
  bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(device_, &bci, nullptr, &b.buffer_);
  if (r != VK_SUCCESS) {
    b.buffer_ = VK_NULL_HANDLE;
    return vk_error("vkCreateBuffer", r);
  }
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer_, &req);
  // Host-visible memory, coherent if there is such a type.
  std::optional<uint32_t> type;
  const VkMemoryPropertyFlags wants[] = {
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT};
  for (VkMemoryPropertyFlags want : wants) {
    for (uint32_t i = 0; i < memory_.memoryTypeCount && !type; ++i) {
      if ((req.memoryTypeBits & (1u << i)) &&
          (memory_.memoryTypes[i].propertyFlags & want) == want) {
        type = i;
      }
    }
  }
  if (!type) return error(Error::Kind::Unsupported, "no host-visible memory for a storage buffer");
  b.coherent_ =
      (memory_.memoryTypes[*type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  if ((r = vkAllocateMemory(device_, &mai, nullptr, &b.memory_)) != VK_SUCCESS) {
    b.memory_ = VK_NULL_HANDLE;
    return vk_error("vkAllocateMemory", r);
  }
  if ((r = vkBindBufferMemory(device_, b.buffer_, b.memory_, 0)) != VK_SUCCESS) {
    return vk_error("vkBindBufferMemory", r);
  }
  void* p = nullptr;
  if ((r = vkMapMemory(device_, b.memory_, 0, VK_WHOLE_SIZE, 0, &p)) != VK_SUCCESS) {
    return vk_error("vkMapMemory", r);
  }
  b.mapped_ = static_cast<std::byte*>(p);
  Status s = b.fill(std::byte{0});
  if (!s.ok()) return s.error();
  return b;
}

Buffer::Buffer(Buffer&& other) noexcept {
  *this = std::move(other);
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, nullptr);
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
    mapped_ = std::exchange(other.mapped_, nullptr);
    size_ = std::exchange(other.size_, 0);
    coherent_ = std::exchange(other.coherent_, true);
  }
  return *this;
}

Buffer::~Buffer() {
  release();
}

void Buffer::release() {
  if (device_ != nullptr) device_->release(buffer_, memory_);
  device_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  size_ = 0;
}

Status Buffer::upload(std::span<const std::byte> data, size_t offset) {
  if (mapped_ == nullptr) return error(Error::Kind::InvalidArgument, "upload to an empty buffer");
  if (offset > size_ || data.size() > size_ - offset) {
    return error(Error::Kind::InvalidArgument, "upload of " + std::to_string(data.size()) +
                                                   " bytes at offset " + std::to_string(offset) +
                                                   " into a buffer of " + std::to_string(size_));
  }
  if (!data.empty()) std::memcpy(mapped_ + offset, data.data(), data.size());
  if (!coherent_) {
    VkMappedMemoryRange range{};
    range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
    range.memory = memory_;
    range.size = VK_WHOLE_SIZE;
    VkResult r = vkFlushMappedMemoryRanges(device_->device_, 1, &range);
    if (r != VK_SUCCESS) return vk_error("vkFlushMappedMemoryRanges", r);
  }
  return {};
}

Status Buffer::download(std::span<std::byte> out, size_t offset) const {
  if (mapped_ == nullptr) {
    return error(Error::Kind::InvalidArgument, "download from an empty buffer");
  }
  if (offset > size_ || out.size() > size_ - offset) {
    return error(Error::Kind::InvalidArgument, "download of " + std::to_string(out.size()) +
                                                   " bytes at offset " + std::to_string(offset) +
                                                   " from a buffer of " + std::to_string(size_));
  }
  if (!coherent_) {
    VkMappedMemoryRange range{};
    range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
    range.memory = memory_;
    range.size = VK_WHOLE_SIZE;
    VkResult r = vkInvalidateMappedMemoryRanges(device_->device_, 1, &range);
    if (r != VK_SUCCESS) return vk_error("vkInvalidateMappedMemoryRanges", r);
  }
  if (!out.empty()) std::memcpy(out.data(), mapped_ + offset, out.size());
  return {};
}

Status Buffer::fill(std::byte value) {
  if (mapped_ == nullptr) return error(Error::Kind::InvalidArgument, "fill of an empty buffer");
  std::memset(mapped_, static_cast<int>(value), size_);
  return upload({}, 0);  // flushes non-coherent memory
}

// ---- pipelines -----------------------------------------------------------------------

Result<Pipeline> Device::create_pipeline(std::span<const uint32_t> spirv, PipelineOptions options) {
  if (device_ == VK_NULL_HANDLE) return closed();
  if (spirv.empty() || spirv[0] != 0x07230203u) {
    return error(Error::Kind::InvalidArgument, "not SPIR-V (no magic number)");
  }
  if (options.buffers == 0 || options.buffers > info_.max_storage_buffers) {
    return error(Error::Kind::InvalidArgument,
                 "a pipeline needs 1 to " + std::to_string(info_.max_storage_buffers) +
                     " storage buffers, not " + std::to_string(options.buffers));
  }
  if (options.require_full_subgroups && !info_.subgroup.full_subgroups) {
    return error(Error::Kind::Unsupported, "the device cannot require full subgroups");
  }
  const bool required_size =
      options.subgroup_size != 0 && options.subgroup_size != info_.subgroup.size;
  if (required_size) {
    const auto sizes = info_.subgroup.sizes();
    if (std::find(sizes.begin(), sizes.end(), options.subgroup_size) == sizes.end())
      return error(Error::Kind::Unsupported, "the device cannot run subgroups of " +
                                                 std::to_string(options.subgroup_size) +
                                                 " lanes in compute shaders");
  }
  try {
    Pipeline p;
    p.device_ = this;
    count_live();
    p.buffers_ = options.buffers;
    VkResult r;

    VkShaderModuleCreateInfo smci{};
    smci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    smci.codeSize = spirv.size_bytes();
    smci.pCode = spirv.data();
    if ((r = vkCreateShaderModule(device_, &smci, nullptr, &p.module_)) != VK_SUCCESS) {
      p.module_ = VK_NULL_HANDLE;
      return vk_error("vkCreateShaderModule", r);
    }

    std::vector<VkDescriptorSetLayoutBinding> bindings(options.buffers);
    for (uint32_t i = 0; i < options.buffers; ++i) {
      bindings[i].binding = i;
      bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      bindings[i].descriptorCount = 1;
      bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dslci{};
    dslci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    dslci.bindingCount = options.buffers;
    dslci.pBindings = bindings.data();
    if ((r = vkCreateDescriptorSetLayout(device_, &dslci, nullptr, &p.set_layout_)) != VK_SUCCESS) {
      p.set_layout_ = VK_NULL_HANDLE;
      return vk_error("vkCreateDescriptorSetLayout", r);
    }

    VkPipelineLayoutCreateInfo plci{};
    plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &p.set_layout_;
    if ((r = vkCreatePipelineLayout(device_, &plci, nullptr, &p.layout_)) != VK_SUCCESS) {
      p.layout_ = VK_NULL_HANDLE;
      return vk_error("vkCreatePipelineLayout", r);
    }

    VkComputePipelineCreateInfo cpci{};
    cpci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    cpci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpci.stage.module = p.module_;
    cpci.stage.pName = "main";
    if (options.require_full_subgroups) {
      cpci.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    }
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss{};
    rss.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO;
    rss.requiredSubgroupSize = options.subgroup_size;
    if (required_size) cpci.stage.pNext = &rss;
    cpci.layout = p.layout_;
    if ((r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &cpci, nullptr, &p.pipeline_)) !=
        VK_SUCCESS) {
      p.pipeline_ = VK_NULL_HANDLE;
      return vk_error("vkCreateComputePipelines", r);
    }

    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, options.buffers};
    VkDescriptorPoolCreateInfo dpci{};
    dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &size;
    if ((r = vkCreateDescriptorPool(device_, &dpci, nullptr, &p.pool_)) != VK_SUCCESS) {
      p.pool_ = VK_NULL_HANDLE;
      return vk_error("vkCreateDescriptorPool", r);
    }
    VkDescriptorSetAllocateInfo dsai{};
    dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    dsai.descriptorPool = p.pool_;
    dsai.descriptorSetCount = 1;
    dsai.pSetLayouts = &p.set_layout_;
    if ((r = vkAllocateDescriptorSets(device_, &dsai, &p.set_)) != VK_SUCCESS) {
      p.set_ = VK_NULL_HANDLE;
      return vk_error("vkAllocateDescriptorSets", r);
    }

    p.infos_.resize(options.buffers);
    p.writes_.resize(options.buffers);
    for (uint32_t i = 0; i < options.buffers; ++i) {
      VkWriteDescriptorSet& w = p.writes_[i];
      w = VkWriteDescriptorSet{};
      w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      w.dstSet = p.set_;
      w.dstBinding = i;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &p.infos_[i];
    }
    return p;
  } catch (const std::exception& ex) {
    return error(Error::Kind::Internal, std::string("create_pipeline: ") + ex.what());
  }
}

Pipeline::Pipeline(Pipeline&& other) noexcept {
  *this = std::move(other);
}

Pipeline& Pipeline::operator=(Pipeline&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, nullptr);
    module_ = std::exchange(other.module_, VK_NULL_HANDLE);
    set_layout_ = std::exchange(other.set_layout_, VK_NULL_HANDLE);
    layout_ = std::exchange(other.layout_, VK_NULL_HANDLE);
    pipeline_ = std::exchange(other.pipeline_, VK_NULL_HANDLE);
    pool_ = std::exchange(other.pool_, VK_NULL_HANDLE);
    set_ = std::exchange(other.set_, VK_NULL_HANDLE);
    buffers_ = std::exchange(other.buffers_, 0);
    // The writes point into infos_; moving a vector keeps its elements where they are.
    infos_ = std::move(other.infos_);
    writes_ = std::move(other.writes_);
  }
  return *this;
}

Pipeline::~Pipeline() {
  release();
}

void Pipeline::release() {
  if (device_ != nullptr) device_->release(module_, set_layout_, layout_, pipeline_, pool_);
  device_ = nullptr;
  module_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  pipeline_ = VK_NULL_HANDLE;
  pool_ = VK_NULL_HANDLE;
  set_ = VK_NULL_HANDLE;
  buffers_ = 0;
  infos_.clear();
  writes_.clear();
}

// ---- dispatch ------------------------------------------------------------------------
//
// Long shaders on lavapipe (Mesa 22.3.6, measured on a 2-core machine):
//
// - There is no endless loop: llvmpipe counts the iterations of ALL the loops of a
//   shader together, per subgroup, and leaves every loop once the count reaches
//   65,535 (a compile-time constant). `for (i < 100000)` runs 65,535 times; two
//   loops of 50,000 run 65,534 together (65,533 after a loop that ran 0 times);
//   once the count is spent, every later loop runs once; nested 1,000 x 1,000
//   loops run 65,405 inner iterations; `while (true)` and a spin on memory that
//   never changes end after 65,536 and 65,535. Silently: the results are wrong and
//   nothing reports it. The translator must keep programs far below the cap or
//   detect that they reach it (count iterations itself); a timeout cannot catch it.
// - So a dispatch is bounded, but the bound can be minutes: each subgroup may run
//   65,535 iterations of an arbitrary body, times 65,535 workgroups of up to 1,024
//   invocations. 65,535 workgroups of 256 invocations looping on four multiply-adds
//   take about 5 minutes on 2 cores (4.4 ms a workgroup).
// - vkWaitForFences honours the timeout while the shader runs (returns VK_TIMEOUT
//   on time); the work goes on in lavapipe's threads. After it ends the fence
//   signals and the device is usable again (busy() polls for that).
// - Reading a buffer while the timed-out shader runs gives a partial result.
// - A process may exit while such a shader runs: it ends promptly (0.1 s; the
//   driver's threads die with it), as nothing waits for the device on the way out.

Status Device::dispatch(Pipeline& pipeline, std::span<Buffer* const> buffers, uint32_t groups_x,
                        std::chrono::nanoseconds timeout) {
  if (pipeline.device_ != this || !pipeline.valid()) {
    return error(Error::Kind::InvalidArgument, "dispatch of a pipeline not made by this device");
  }
  if (buffers.size() != pipeline.buffers_) {
    return error(Error::Kind::InvalidArgument,
                 "the pipeline has " + std::to_string(pipeline.buffers_) + " buffer bindings, " +
                     std::to_string(buffers.size()) + " buffers given");
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i] == nullptr || buffers[i]->device_ != this || !buffers[i]->valid()) {
      return error(Error::Kind::InvalidArgument,
                   "buffer " + std::to_string(i) + " is not a buffer of this device");
    }
  }
  if (groups_x == 0 || groups_x > info_.max_workgroup_count_x) {
    return error(Error::Kind::InvalidArgument, "workgroup count " + std::to_string(groups_x) +
                                                   " outside 1.." +
                                                   std::to_string(info_.max_workgroup_count_x));
  }

  std::lock_guard<std::mutex> lock(mu_);
  if (device_ == VK_NULL_HANDLE) return closed();
  poll_locked();
  if (lost_) return error(Error::Kind::DeviceLost, "the Vulkan device was lost earlier");
  if (pending_) {
    return error(Error::Kind::Busy, "a dispatch that timed out earlier is still running");
  }

  for (size_t i = 0; i < buffers.size(); ++i) {
    pipeline.infos_[i] = VkDescriptorBufferInfo{buffers[i]->buffer_, 0, VK_WHOLE_SIZE};
  }
  vkUpdateDescriptorSets(device_, pipeline.buffers_, pipeline.writes_.data(), 0, nullptr);

  VkResult r = vkResetCommandBuffer(command_buffer_, 0);
  if (r != VK_SUCCESS) return vk_error("vkResetCommandBuffer", r);
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if ((r = vkBeginCommandBuffer(command_buffer_, &begin)) != VK_SUCCESS) {
    return vk_error("vkBeginCommandBuffer", r);
  }
  vkCmdBindPipeline(command_buffer_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline_);
  vkCmdBindDescriptorSets(command_buffer_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout_, 0, 1,
                          &pipeline.set_, 0, nullptr);
  vkCmdDispatch(command_buffer_, groups_x, 1, 1);
  // Shader writes, then host reads (download after the fence).
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(command_buffer_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  if ((r = vkEndCommandBuffer(command_buffer_)) != VK_SUCCESS) {
    return vk_error("vkEndCommandBuffer", r);
  }
  if ((r = vkResetFences(device_, 1, &fence_)) != VK_SUCCESS) return vk_error("vkResetFences", r);
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &command_buffer_;
  if ((r = vkQueueSubmit(queue_, 1, &submit, fence_)) != VK_SUCCESS) {
    lost_ = r == VK_ERROR_DEVICE_LOST;
    return vk_error("vkQueueSubmit", r);
  }
  const uint64_t ns = static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  r = vkWaitForFences(device_, 1, &fence_, VK_TRUE, ns);
  if (r == VK_TIMEOUT) {
    pending_ = true;
    Error e = error(Error::Kind::Timeout,
                    "the dispatch did not finish within " + std::to_string(ns / 1000000) + " ms");
    e.vk_result = r;
    return e;
  }
  if (r != VK_SUCCESS) {
    lost_ = r == VK_ERROR_DEVICE_LOST;
    return vk_error("vkWaitForFences", r);
  }
  return {};
}

}  // namespace simt::vulkan
