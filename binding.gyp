{
  "variables": {
    "cuda_home%": "<!(node native/scripts/find-cuda.cjs)"
  },
  "targets": [
    {
      "target_name": "sparse",
      "sources": ["<!@(node native/scripts/sources.cjs cc)"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "native"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-pthread", "-Wall", "-Wno-unused-function"],
      "ldflags": ["-pthread"],
      "conditions": [
        ["cuda_home!=''", {
          "sources": ["<!@(node native/scripts/sources.cjs cu)"],
          "defines": ["SPARSE_WITH_CUDA=1"],
          "include_dirs": ["<(cuda_home)/include"],
          "libraries": ["<(cuda_home)/lib64/libcudart_static.a", "-ldl", "-lrt", "-lpthread"],
          "rules": [
            {
              "rule_name": "nvcc",
              "extension": "cu",
              "inputs": [
                "<(RULE_INPUT_PATH)",
                "<!@(node native/scripts/sources.cjs cuh)",
                "<!@(node native/scripts/sources.cjs h)"
              ],
              "outputs": ["<(INTERMEDIATE_DIR)/<(RULE_INPUT_ROOT).cu.o"],
              "action": [
                "node", "native/scripts/nvcc.cjs", "<(cuda_home)/bin/nvcc",
                "<(RULE_INPUT_PATH)", "<@(_outputs)"
              ],
              "message": "nvcc <(RULE_INPUT_PATH)",
              "process_outputs_as_sources": 1
            }
          ]
        }]
      ]
    }
  ]
}
