// The Vulkan device of the Vulkan runner: one instance, physical device, logical
// device and compute queue per process, compute pipelines made from SPIR-V with N
// storage buffers, host-visible buffers, and dispatches that wait with a timeout.
//
// Lifecycle: Device::get() creates the device on its first call and returns the
// same one (or the same error) afterwards; it lives until the process ends (see
// "Exit" in device.cpp for what is destroyed then). Buffers and pipelines belong to it
// and may be created, used and destroyed from any thread; dispatches are
// serialised (one queue, one command buffer, one fence).
//
// Which device: the first physical device with Vulkan 1.2 and a compute queue, or
// the one Device::select() names (its index among the physical devices the loader
// lists, as list_devices() numbers them). The Vulkan loader decides what is
// visible: VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json selects
// lavapipe alone. lavapipe reads LP_NATIVE_VECTOR_WIDTH
// once per process (subgroup size = width / 32), and Mesa's on-disk shader cache
// ignores it: set MESA_SHADER_CACHE_DISABLE=true (or one MESA_SHADER_CACHE_DIR per
// width) when the width varies between processes.
//
// Timeouts: Vulkan cannot cancel work. A dispatch that does not finish in time
// returns Kind::Timeout and leaves the device busy; later dispatches return
// Kind::Busy until the timed-out one ends (then the device is usable again). A
// buffer or pipeline destroyed meanwhile keeps its Vulkan objects (memory the
// shader may still use) until then. A process may also just report the timeout
// and exit: see "Long shaders" in device.cpp for what lavapipe does with shaders
// that run long.
#pragma once

#include <vulkan/vulkan.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "result.h"

namespace simt::vulkan {

class Device;

// What the device's subgroups can do in compute shaders.
struct SubgroupInfo {
  uint32_t size = 0;  // VkPhysicalDeviceSubgroupProperties::subgroupSize
  // The range subgroup size control allows (both = size without it).
  uint32_t min_size = 0;
  uint32_t max_size = 0;
  VkSubgroupFeatureFlags operations = 0;  // supported in compute shaders (0 if compute has none)
  bool full_subgroups = false;  // computeFullSubgroups enabled: PipelineOptions can ask for it
  // subgroupSizeControl enabled and compute among requiredSubgroupSizeStages: a
  // pipeline may require any power of two from min_size to max_size.
  bool size_control = false;

  // The subgroup sizes a compute pipeline can run with, ascending: `size`, and with
  // size_control every power of two from min_size to max_size.
  std::vector<uint32_t> sizes() const;

  bool has(VkSubgroupFeatureFlagBits op) const { return (operations & op) != 0; }
  // The supported operations as GLSL extension suffixes, in bit order:
  // "basic vote arithmetic ballot shuffle shuffle_relative clustered quad".
  std::string operation_names() const;
};

// What the runner needs to know about the device (its capabilities come from here).
struct DeviceInfo {
  std::string name;          // deviceName, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string driver;        // driverName and driverInfo, e.g. "llvmpipe Mesa 22.3.6 (LLVM 15.0.6)"
  uint32_t api_version = 0;  // VK_MAKE_API_VERSION
  uint32_t driver_version = 0;
  VkDriverId driver_id = VkDriverId(0);  // VkPhysicalDeviceDriverProperties::driverID
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t max_workgroup_size_x = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_count_x = 0;
  uint32_t max_shared_memory = 0;         // bytes
  uint32_t max_storage_buffers = 0;       // per pipeline (per compute stage)
  uint32_t max_storage_buffer_range = 0;  // bytes per binding
  // Optional features, enabled when the device has them.
  bool int64 = false, int16 = false, int8 = false;
  bool storage_8bit = false, storage_16bit = false;  // 8/16-bit types in storage buffers
  SubgroupInfo subgroup;

  std::string api_version_string() const;  // "1.3.230"
  std::string type_name() const;           // "cpu", "discrete GPU", ...
  // Mesa's lavapipe (llvmpipe): its subgroup size is set per process by
  // LP_NATIVE_VECTOR_WIDTH, not by subgroup size control.
  bool lavapipe() const { return driver_id == VK_DRIVER_ID_MESA_LLVMPIPE; }
};

// A physical device as the loader lists it, for --info and --device.
struct DeviceSummary {
  uint32_t index = 0;  // in vkEnumeratePhysicalDevices order
  DeviceInfo info;     // without the features a logical device would enable
  // Empty when the runner can use it; otherwise why not ("Vulkan 1.1", "no compute
  // queue").
  std::string unusable;
};

// Every physical device the loader offers (a fresh instance; no logical device).
Result<std::vector<DeviceSummary>> list_devices();

// A storage buffer in host-visible memory, mapped for its whole life. Move-only.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  size_t size() const { return size_; }
  bool valid() const { return buffer_ != VK_NULL_HANDLE; }

  // Copies bytes in / out at `offset`. Not while a dispatch using this buffer runs.
  Status upload(std::span<const std::byte> data, size_t offset = 0);
  Status download(std::span<std::byte> out, size_t offset = 0) const;
  // Convenience for 32-bit words.
  Status upload_words(std::span<const uint32_t> words, size_t offset = 0) {
    return upload(std::as_bytes(words), offset);
  }
  Status download_words(std::span<uint32_t> words, size_t offset = 0) const {
    return download(std::as_writable_bytes(words), offset);
  }
  Status fill(std::byte value);

 private:
  friend class Device;
  void release();
  Device* device_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  std::byte* mapped_ = nullptr;
  size_t size_ = 0;
  bool coherent_ = true;
};

struct PipelineOptions {
  uint32_t buffers = 1;  // storage buffers at set 0, bindings 0..buffers-1
  // Every subgroup of a workgroup full
  // (VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT): Kind::Unsupported unless
  // SubgroupInfo::full_subgroups.
  bool require_full_subgroups = false;
  // Run with this subgroup size (VkPipelineShaderStageRequiredSubgroupSizeCreateInfo)
  // when it is not the device's default size; 0: the default. Kind::Unsupported
  // unless it is one of SubgroupInfo::sizes().
  uint32_t subgroup_size = 0;
};

// A compute pipeline with its descriptor set. Move-only.
class Pipeline {
 public:
  Pipeline() = default;
  Pipeline(Pipeline&& other) noexcept;
  Pipeline& operator=(Pipeline&& other) noexcept;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();

  uint32_t buffers() const { return buffers_; }
  bool valid() const { return pipeline_ != VK_NULL_HANDLE; }

 private:
  friend class Device;
  void release();
  Device* device_ = nullptr;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  uint32_t buffers_ = 0;
  // Written by each dispatch (under the device's lock), sized once here.
  std::vector<VkDescriptorBufferInfo> infos_;
  std::vector<VkWriteDescriptorSet> writes_;
};

class Device {
 public:
  // The process's device, created on the first call; Kind::NoDevice when there is
  // no loader, driver or device fit for compute. Thread-safe.
  static Result<Device*> get();
  // Before the first get(): use physical device `index` (list_devices() numbering)
  // instead of the first usable one; get() fails with Kind::NoDevice if it is
  // absent or unusable.
  static void select(uint32_t index);

  const DeviceInfo& info() const { return info_; }

  // A buffer of `bytes` bytes (> 0), zero-filled.
  Result<Buffer> create_buffer(size_t bytes);
  // A compute pipeline from SPIR-V (entry point "main").
  Result<Pipeline> create_pipeline(std::span<const uint32_t> spirv, PipelineOptions options = {});

  // Runs `groups_x` workgroups of `pipeline` with `buffers` bound at bindings
  // 0..n-1 (exactly pipeline.buffers() of them), and waits until it completes, at
  // most `timeout`. Shader writes are visible to download() when it returns ok.
  Status dispatch(Pipeline& pipeline, std::span<Buffer* const> buffers, uint32_t groups_x,
                  std::chrono::nanoseconds timeout);
  Status dispatch(Pipeline& pipeline, std::initializer_list<Buffer*> buffers, uint32_t groups_x,
                  std::chrono::nanoseconds timeout) {
    return dispatch(pipeline, std::span<Buffer* const>(buffers.begin(), buffers.size()), groups_x,
                    timeout);
  }

  // True while a timed-out dispatch is still running. Checks its fence; when it
  // has ended, destroys what was released meanwhile.
  bool busy();
  // How many Vulkan objects released while busy wait to be destroyed.
  size_t retired_objects();

  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

 private:
  friend class Buffer;
  friend class Pipeline;
  Device() = default;
  ~Device() = default;  // never called
  Status init();
  // Under mu_: if a timed-out dispatch has ended, clears pending_ and destroys the
  // graveyard; notes a lost device.
  void poll_locked();
  void count_live();     // a buffer or pipeline was made (release() counts them down)
  void close_if_idle();  // at exit
  void destroy_graveyard_locked();
  // Destroy now, or put in the graveyard while a timed-out dispatch runs (or forever
  // once the device is lost). Null handles are ignored.
  void release(VkBuffer buffer, VkDeviceMemory memory);
  void release(VkShaderModule module, VkDescriptorSetLayout set_layout, VkPipelineLayout layout,
               VkPipeline pipeline, VkDescriptorPool pool);

  // Objects released while a timed-out dispatch ran.
  struct Graveyard {
    std::vector<VkBuffer> buffers;
    std::vector<VkDeviceMemory> memories;
    std::vector<VkShaderModule> modules;
    std::vector<VkDescriptorSetLayout> set_layouts;
    std::vector<VkPipelineLayout> layouts;
    std::vector<VkPipeline> pipelines;
    std::vector<VkDescriptorPool> pools;
  };

  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer command_buffer_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  DeviceInfo info_;
  std::mutex mu_;         // the queue, command buffer, fence and what follows
  bool pending_ = false;  // a timed-out dispatch has not been seen to finish
  bool lost_ = false;
  Graveyard graveyard_;
  size_t live_objects_ = 0;  // buffers and pipelines not yet released
};

}  // namespace simt::vulkan
