// SPDX-License-Identifier: Apache-2.0
// The base of the sources that wrap another (cast, progress, selection): it starts as a copy
// of the inner source's listing, and a subclass changes what it must.
#pragma once

#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

class source_decorator : public tensor_source {
 public:
  explicit source_decorator(source_ptr inner) : inner_(std::move(inner)) {
    format_ = inner_->format();
    format_id_ = inner_->format_id();
    path_ = inner_->path();
    tensors_ = inner_->tensors();
    metadata_ = inner_->metadata();
    notes_ = inner_->notes();
    shard_bytes_ = inner_->shard_bytes();
    input_bytes_ = inner_->input_bytes();
  }

 protected:
  source_ptr inner_;
};

}  // namespace safetensors::pipeline
