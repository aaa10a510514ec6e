// N-API glue of the kernels' prepared formats, built on the host exactly as the kernels'
// plans build them (for tests and inspection; synchronous, pure C++, also in a CPU-only
// build): tcFormat, bitmapFormat, sp24Format, sp24ToCsr, sddmmChunkStarts.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "binding/exports.h"
#include "binding/kernel_call.h"
#include "common/bitmap_tiles.h"
#include "common/gemm_plan.h"
#include "common/sparse24.h"
#include "common/stream_plan.h"
#include "common/tc_tiles.h"
#include "common/unstructured_stream.h"

namespace sparse {
namespace binding {
namespace {

// The arguments of the format builders: {m, k, rowOffsets, columnIndices, values: Uint16Array}.
struct Csr16Args {
  int m = 0, k = 0;
  CsrPattern c;
  const uint16_t* values = nullptr;
};
Csr16Args ParseCsr16(Args& a) {
  Csr16Args r;
  r.m = a.Dim("m"), r.k = a.Dim("k");
  r.c = ParseMonotoneCsrPattern(a, r.m);
  r.values = static_cast<const uint16_t*>(a.Array("values", napi_uint16_array, "Uint16Array", r.c.nnz));
  return r;
}

// tcFormat({m, k, rowOffsets, columnIndices, values: Uint16Array}) -> {offsets, entries}
// (Uint32Array): the tensor-core SpMM's tiles, built on the host exactly as the kernels do.
// Synchronous; pure C++ (also in a CPU-only build), for tests and inspection.
Napi::Value TcFormatJs(const Napi::CallbackInfo& info) {
  Args a(info, "tcFormat");
  const Csr16Args c = ParseCsr16(a);
  TcTiles t;
  const std::string err = BuildTcTiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("offsets", CopyToJs<Napi::Uint32Array>(env, t.offsets.data(), t.offsets.size()));
  o.Set("entries", CopyToJs<Napi::Uint32Array>(env, t.entries.data(), t.entries.size()));
  return o;
}

// bitmapFormat({m, k, rowOffsets, columnIndices, values: Uint16Array}) -> {offsets, data,
// strips, ktiles}: the bitmap kernel's tiles (common/bitmap_tiles.h). Synchronous; pure C++.
Napi::Value BitmapFormatJs(const Napi::CallbackInfo& info) {
  Args a(info, "bitmapFormat");
  const Csr16Args c = ParseCsr16(a);
  BitmapTiles t;
  const std::string err = BuildBitmapTiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("offsets", CopyToJs<Napi::Uint32Array>(env, t.offsets.data(), t.offsets.size()));
  o.Set("data", CopyToJs<Napi::Uint32Array>(env, t.data.data(), t.data.size()));
  o.Set("strips", t.strips);
  o.Set("ktiles", t.ktiles);
  return o;
}

// sp24Format({m, k, rowOffsets, columnIndices, values: Uint16Array}) -> {values, meta,
// strips, ksteps}: the 2:4 kernel's tiles (common/sparse24.h); a RangeError naming the first
// group with more than two nonzeros when the matrix is not 2:4. Synchronous; pure C++.
Napi::Value Sp24FormatJs(const Napi::CallbackInfo& info) {
  Args a(info, "sp24Format");
  const Csr16Args c = ParseCsr16(a);
  Sp24Tiles t;
  const std::string err = BuildSp24Tiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("values", CopyToJs<Napi::Uint16Array>(env, t.values.data(), t.values.size()));
  o.Set("meta", CopyToJs<Napi::Uint32Array>(env, t.meta.data(), t.meta.size()));
  o.Set("strips", t.strips);
  o.Set("ksteps", t.ksteps);
  return o;
}

// sp24Staged({m, k, rowOffsets, columnIndices, values: Uint16Array, strips, steps}) ->
// Uint8Array: the 2:4 tiles staged for the streaming engine (StageSp24Tiles in
// common/sparse24.h) in row blocks of `strips` strips and K stages of `steps` k-steps.
// Synchronous; pure C++.
Napi::Value Sp24StagedJs(const Napi::CallbackInfo& info) {
  Args a(info, "sp24Staged");
  const Csr16Args c = ParseCsr16(a);
  const int strips = a.Dim("strips"), steps = a.Dim("steps");
  if (strips < 1 || strips > 64 || steps < 1 || steps > 64) a.RangeFail("strips and steps must be in [1, 64]");
  Sp24Tiles t;
  const std::string err = BuildSp24Tiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  const std::vector<uint8_t> staged = StageSp24Tiles(t, strips, steps);
  return CopyToJs<Napi::Uint8Array>(info.Env(), staged.data(), staged.size());
}

// sp24Runs({m, k, rowOffsets, columnIndices, values: Uint16Array, unitMultiple}) -> Uint8Array:
// the runs the GEMM engine's `_ss` kernels read (StageSp24Runs in common/sparse24.h: one run of
// kSp24RunBytes per 128 rows and K stage of 64 columns, the compressed values 64-byte swizzled,
// then their metadata), ceil(m / 128) units a K stage padded to a multiple of unitMultiple (1-8;
// the addon pads to its tile's 1 or 2). Synchronous; pure C++.
Napi::Value Sp24RunsJs(const Napi::CallbackInfo& info) {
  Args a(info, "sp24Runs");
  const Csr16Args c = ParseCsr16(a);
  const int unit_multiple = a.Dim("unitMultiple");
  if (unit_multiple < 1 || unit_multiple > 8) a.RangeFail("unitMultiple must be in [1, 8]");
  Sp24Tiles t;
  const std::string err = BuildSp24Tiles(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, &t);
  if (!err.empty()) a.RangeFail(err);
  const std::vector<uint8_t> runs = StageSp24Runs(t, unit_multiple);
  return CopyToJs<Napi::Uint8Array>(info.Env(), runs.data(), runs.size());
}

// The `resident` argument (Int32Array(8): clusters of c blocks that run at once, c = 1..8)
// of streamPlan and stream24Rows; a RangeError on a negative count.
void ReadResident(Args& a, int (&resident)[kMaxStreamCluster]) {
  const int32_t* r = static_cast<const int32_t*>(a.Array("resident", napi_int32_array, "Int32Array", kMaxStreamCluster));
  for (int c = 0; c < kMaxStreamCluster; ++c) {
    if (r[c] < 0) a.RangeFail("resident counts must not be negative");
    resident[c] = r[c];
  }
}

// streamPlan({rowBlocks, kstages, resident: Int32Array(8)}) -> {grid, cluster}: the streaming
// engine's launch plan (PlanStream, common/stream_plan.h) for a device that holds resident[c - 1]
// clusters of c blocks at once. Synchronous; pure C++.
Napi::Value StreamPlanJs(const Napi::CallbackInfo& info) {
  Args a(info, "streamPlan");
  const int row_blocks = a.Dim("rowBlocks"), kstages = a.Dim("kstages");
  if (row_blocks < 1 || kstages < 1) a.RangeFail("rowBlocks and kstages must be at least 1");
  int resident[kMaxStreamCluster];
  ReadResident(a, resident);
  const StreamPlan p = PlanStream(row_blocks, kstages, resident);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("grid", p.grid);
  o.Set("cluster", p.cluster);
  return o;
}

// stream24Wins({m, k, n}) -> boolean: whether the selection prefers the streaming engine's
// 2:4 kernel to the mma.sp one where both can run (Stream24Wins, common/stream_plan.h).
// Synchronous; pure C++.
Napi::Value Stream24WinsJs(const Napi::CallbackInfo& info) {
  Args a(info, "stream24Wins");
  const int m = a.Dim("m"), k = a.Dim("k"), n = a.Dim("n");
  if (m < 1 || k < 1 || n < 1) a.RangeFail("m, k and n must be at least 1");
  return Napi::Boolean::New(info.Env(), Stream24Wins(m, k, n));
}

// The optional `pad` argument of stream24Rows and stream24Pad: SPARSE_S24E_PAD's mode, 'auto' (the
// addon's default) where it is left out.
Stream24Pad PadArg(const Args& a) {
  return a.Has("pad") ? Stream24PadOf(a.String("pad", {"auto", "all", "off"}).c_str()) : Stream24Pad::kAuto;
}

// stream24Rows({m, k, n, resident: Int32Array(8), pad?: 'auto' | 'all' | 'off'}) -> 64 | 128: the
// row-block height the selection runs the 2:4 streaming engine at (Stream24Rows64At,
// common/stream_plan.h: a launch that pads B is its box's), from the plan of the 64-row kernel
// (PlanStream over Stream24RowBlocks(m, 4) and Stream24KStages(k)) on a device holding
// resident[c - 1] clusters of c of its blocks at once, with SPARSE_S24E_PAD's mode `pad` (default
// auto, as the addon's). Synchronous; pure C++.
Napi::Value Stream24RowsJs(const Napi::CallbackInfo& info) {
  Args a(info, "stream24Rows");
  const int m = a.Dim("m"), k = a.Dim("k"), n = a.Dim("n");
  if (m < 1 || k < 1 || n < 1) a.RangeFail("m, k and n must be at least 1");
  int resident[kMaxStreamCluster];
  ReadResident(a, resident);
  const Stream24Pad pad = PadArg(a);
  const int row_blocks = Stream24RowBlocks(m, 4), kstages = Stream24KStages(k);
  const StreamPlan w4 = PlanStream(row_blocks, kstages, resident);
  return Napi::Number::New(info.Env(),
                           Stream24Rows64At(w4, row_blocks, kstages, n, pad) ? 64 : 128);
}

// stream24Pad({n, pad?: 'auto' | 'all' | 'off', rows?: 64 | 128}) -> 0 | 16 | 32 | 64: the
// columns the 2:4 streaming engine's kernel of `rows` rows a block (default 128: w8) pads B to at
// N under SPARSE_S24E_PAD's mode `pad` (default auto, as the addon's), 0 where it reads B as it is
// (Stream24PadColumns, common/stream_plan.h). Synchronous; pure C++.
Napi::Value Stream24PadJs(const Napi::CallbackInfo& info) {
  Args a(info, "stream24Pad");
  const int n = a.Dim("n");
  if (n < 1) a.RangeFail("n must be at least 1");
  const Stream24Pad pad = PadArg(a);
  const int rows = a.Has("rows") ? a.Dim("rows") : 128;
  if (rows != 64 && rows != 128) a.RangeFail("rows must be 64 or 128");
  return Napi::Number::New(info.Env(), Stream24PadColumns(n, pad, rows));
}

// stream24L2Ahead({grid, cluster, rowBlocks, kstages, n, dramGBps?}) -> 0 | 1: the stages past the
// ring whose A the 2:4 streaming engine keeps in flight into L2 on a launch of that plan
// (streamPlan's grid and cluster) over rowBlocks row blocks of kstages K stages at N, on a GPU whose
// DRAM streams dramGBps (0 or absent: unknown; the addon's launches read the device's:
// PeakDramGBps) (Stream24L2Ahead, common/stream_plan.h; SPARSE_S24E_L2_AHEAD overrides it in the
// addon's launches, not here). Synchronous; pure C++.
Napi::Value Stream24L2AheadJs(const Napi::CallbackInfo& info) {
  Args a(info, "stream24L2Ahead");
  const int grid = a.Dim("grid"), cluster = a.Dim("cluster"), row_blocks = a.Dim("rowBlocks"), kstages = a.Dim("kstages"),
            n = a.Dim("n");
  if (grid < 1 || row_blocks < 1 || kstages < 1 || n < 1) a.RangeFail("grid, rowBlocks, kstages and n must be at least 1");
  if (cluster < 0 || cluster == 1 || cluster > kMaxStreamCluster) a.RangeFail("cluster must be 0 or 2 to 8");
  const int dram_gbps = a.OptionalInt("dramGBps", 0);
  return Napi::Number::New(info.Env(), Stream24L2Ahead(StreamPlan{grid, cluster}, row_blocks, kstages, n, dram_gbps));
}

// unstStream({m, k, nnz, n}) -> {wins, pairs, warps}: whether the selection runs an unstructured
// f16/bf16 matrix on the family ube where it can run (UnstStreamWins), on which form
// (pairs: the pair stream, UnstPairsWins; else the bitmap stream), and the consumer warps of that
// form's kernel at N (8 for the pair stream; UnstStreamWarps for the bitmap stream).
// Synchronous; pure C++.
Napi::Value UnstStreamJs(const Napi::CallbackInfo& info) {
  Args a(info, "unstStream");
  const int m = a.Dim("m"), k = a.Dim("k"), n = a.Dim("n");
  const int nnz = a.Dim("nnz");
  if (m < 1 || k < 1 || n < 1) a.RangeFail("m, k and n must be at least 1");
  Napi::Object o = Napi::Object::New(info.Env());
  const bool pairs = UnstPairsWins(m, k, nnz);
  o.Set("wins", UnstStreamWins(m, k, nnz, n));
  o.Set("pairs", pairs);
  o.Set("warps", pairs ? kUnstPairWarps : UnstStreamWarps(n));
  return o;
}

// unstBitmapStream({m, k, rowOffsets, columnIndices, values: Uint16Array, warps}) -> {bytes,
// maxStageWords, capacity}: the bitmap stream the family ube builds (BuildUnstStream, kBitmapFrag,
// row blocks of `warps` strips, stages of 128 columns): its bytes (runs and offset table), its
// densest stage's values and the ring capacity prepare picks for it (UnstStreamCapacity).
// unstPairStream({m, k, rowOffsets, columnIndices, values, kstage?}) -> the same for its pair
// stream (kPairFrag, 8 warps; maxStageWords in stored registers, UnstPairCapacity), or with
// kstage 64 the one the GEMM engine's family ung builds (stages of 64 columns; capacity the
// smallest of its slots, 120 or 128 registers a tile, that holds the densest stage).
// Synchronous; pure C++. A RangeError on a repeated or out-of-range column.
Napi::Value UnstFormStream(const Napi::CallbackInfo& info, const char* what, UnstLayout layout) {
  Args a(info, what);
  const Csr16Args c = ParseCsr16(a);
  const bool pairs = layout == UnstLayout::kPairFrag;
  const int warps = pairs ? kUnstPairWarps : a.Dim("warps");
  if (warps != 4 && warps != 8) a.RangeFail("warps must be 4 or 8");
  if (c.m < 1 || c.k < 1) a.RangeFail("m and k must be at least 1");
  const int kstage = pairs ? a.OptionalInt("kstage", kUnstStreamKStage) : kUnstStreamKStage;
  if (kstage != kUnstStreamKStage && kstage != kUnGemmKStage) a.RangeFail("kstage must be 128 or 64");
  UnstStream s;
  const std::string err =
      BuildUnstStream(c.m, c.k, c.c.row_offsets, c.c.column_indices, c.values, warps, kstage, 0, &s, layout);
  if (!err.empty()) a.RangeFail(err);
  const int words = s.stats.max_stage_words;
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("bytes", static_cast<double>(s.Bytes()));
  o.Set("maxStageWords", words);
  o.Set("capacity", !pairs ? UnstStreamCapacity(words, warps)
                    : kstage == kUnGemmKStage ? UnGemmCapacity(words)
                                              : UnstPairCapacity(words));
  return o;
}
Napi::Value UnstBitmapStreamJs(const Napi::CallbackInfo& info) {
  return UnstFormStream(info, "unstBitmapStream", UnstLayout::kBitmapFrag);
}
Napi::Value UnstPairStreamJs(const Napi::CallbackInfo& info) {
  return UnstFormStream(info, "unstPairStream", UnstLayout::kPairFrag);
}

// A selection model's argument that turns the model off: the string 'off'.
bool IsOff(const Napi::Value& v) { return v.IsString() && v.As<Napi::String>().Utf8Value() == "off"; }

// gemm24Rows({m, k, n, sms, nnz?, model?}) -> {rows, split, streamK, denseEnough, estimates?,
// model}: the 2:4 tile height the selection runs on the GEMM engine (128 or 256;
// common/gemm_plan.h) on a GPU of `sms` SMs, how many pieces by K the ragged last wave's tiles of
// that height are cut into (TailSplit; below 2: whole), and whether a 2:4 matrix of `nnz` nonzeros
// is dense enough for the 2:4 kernels (DenseWorkPays, common/gemm_plan.h; nnz defaults to half of
// m k, the 2:4 pattern full). Synchronous; pure C++.
// The pick is Gemm24Pick's with the library's constants (kGemm24Fitted: what the selection runs
// unless SPARSE_S24G_MODEL is set), or with `model`'s ({S_m128_n128, S_m256_n128, F, T0, FX0, L2,
// FX3?, S_m128_n64?, S_m256_n64?, S_m128_n256?, S_m256_n192?}: scripts/gpu/s24g-fit.py's PARAMS;
// the 64-column tiles are candidates where both of theirs are given, the 128 x 256 and 256 x 192
// `_ss1` tiles where theirs is),
// with its tile width (cols) and decomposition
// (streamK: 0 whole tiles, 2 or 3), `estimates` (us, Gemm24Us) of every shape it weighed, named
// as the script names them (m256_n128, m256_n128_sk2, m128_n64, ...), and `model`, the constants
// used; the script mirrors it
// (test/kernels/gemm-plan.test.ts). With model 'off', Gemm24Rows' height and the owner's split
// (streamK 2), no estimates, and model null.
Napi::Value Gemm24RowsJs(const Napi::CallbackInfo& info) {
  Args a(info, "gemm24Rows");
  const int m = a.Dim("m"), k = a.Dim("k"), n = a.Dim("n"), sms = a.Dim("sms");
  if (m < 1 || k < 1 || n < 1 || sms < 1) a.RangeFail("m, k, n and sms must be at least 1");
  const long long half = static_cast<long long>(m) * k / 2;
  const long long nnz = a.Has("nnz") ? a.Dim("nnz") : half;
  if (nnz < 0 || nnz > half) a.RangeFail("nnz must be from 0 to m k / 2 (a 2:4 matrix)");
  Gemm24Model md = kGemm24Fitted;
  if (a.Has("model")) {
    const Napi::Value v = info[0].As<Napi::Object>().Get("model");
    if (IsOff(v)) {
      md = Gemm24Model{};
    } else {
      if (!v.IsObject()) a.TypeFail("model must be 'off' or an object of the model's constants");
      Napi::Object mo = v.As<Napi::Object>();
      const auto get = [&](const char* key, bool optional) {
        const Napi::Value x = mo.Get(key);
        if (optional && (x.IsUndefined() || x.IsNull())) return -1.0;
        if (!x.IsNumber() || !std::isfinite(x.As<Napi::Number>().DoubleValue()))
          a.TypeFail(std::string("model.") + key + " must be a finite number");
        return x.As<Napi::Number>().DoubleValue();
      };
      md = Gemm24Model{get("S_m128_n128", false), get("S_m256_n128", false), get("F", false), get("T0", false),
                       get("FX0", false),         get("L2", false),          get("FX3", true)};
      md.s128_n64 = std::max(0.0, get("S_m128_n64", true));
      md.s256_n64 = std::max(0.0, get("S_m256_n64", true));
      md.s128_n256 = std::max(0.0, get("S_m128_n256", true));
      md.s256_n192 = std::max(0.0, get("S_m256_n192", true));
      if (!md.On()) a.RangeFail("model: stage cycles, F and L2 must be above 0, T0 and FX0 at least 0");
      if ((md.s128_n64 > 0) != (md.s256_n64 > 0)) a.RangeFail("model: give both S_m128_n64 and S_m256_n64 above 0, or neither");
    }
  }
  const Gemm24Shape shape = Gemm24Choose(md, m, n, k, sms);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("rows", shape.rows);
  o.Set("cols", shape.cols);
  o.Set("split", shape.stream_k == 0 ? 1 : Gemm24Split(m, n, k, shape.rows, sms, shape.cols));
  o.Set("streamK", shape.stream_k);
  o.Set("denseEnough", DenseWorkPays(m, k, nnz));
  if (md.On()) {
    Napi::Object est = Napi::Object::New(info.Env());
    ForEachGemm24Shape(md, m, n, k, sms, [&](const Gemm24Shape& s) {
      est.Set("m" + std::to_string(s.rows) + "_n" + std::to_string(s.cols) +
                  (s.stream_k ? "_sk" + std::to_string(s.stream_k) : ""),
              Gemm24Us(md, m, n, k, s.rows, s.stream_k, sms, s.cols));
    });
    o.Set("estimates", est);
    Napi::Object used = Napi::Object::New(info.Env());
    const std::pair<const char*, double> constants[] = {{"S_m128_n128", md.s128}, {"S_m256_n128", md.s256},
                                                        {"F", md.bytes_per_cycle}, {"T0", md.fixed_us},
                                                        {"FX0", md.split_us},      {"L2", md.l2_bytes_per_cycle}};
    for (const auto& c : constants) used.Set(c.first, c.second);
    if (md.coop_us >= 0) used.Set("FX3", md.coop_us);
    if (md.Narrow()) used.Set("S_m128_n64", md.s128_n64), used.Set("S_m256_n64", md.s256_n64);
    if (md.Wide()) used.Set("S_m128_n256", md.s128_n256);
    if (md.Wide192()) used.Set("S_m256_n192", md.s256_n192);
    o.Set("model", used);
  } else {
    o.Set("model", info.Env().Null());
  }
  return o;
}

// unstGemmPlan({m, k, n, nnz, sms, undSmall?: {fixedUs, usPerCycle} | 'off'}) -> {ung: {nTile,
// split, cycles}, und: {...}, ungUs, csrUs, unstGemmWins, undGemmWins, undSmall}: the models the
// selection weighs unstructured A with at N >= 128 (common/gemm_plan.h): the pair stream's
// (UnGemmPick, UnGemmCycles) and A stored dense's (UndGemmPick, UndGemmCycles) shapes and cycles
// on a GPU of `sms` SMs, UnstGemmWins' two estimates (ung's and the CSR kernels', us) and both
// rules. UndGemmWins' branch below 2^31 multiply-adds runs with the library's fitted constants
// (kUndSmallFitted, what the selection runs unless SPARSE_UND_SMALL is set), with undSmall's, or
// not at all with 'off'; `undSmall` in the result gives the constants used (null: off). For
// scripts that model the selection (scripts/gpu/und-dlmc.py mirrors it;
// test/kernels/gemm-plan.test.ts keeps the two in step). Synchronous; pure C++.
Napi::Value UnstGemmPlanJs(const Napi::CallbackInfo& info) {
  Args a(info, "unstGemmPlan");
  const long long m = a.Dim("m"), k = a.Dim("k"), n = a.Dim("n"), nnz = a.Dim("nnz");
  const int sms = a.Dim("sms");
  if (m < 1 || k < 1 || n < 1 || sms < 1) a.RangeFail("m, k, n and sms must be at least 1");
  if (nnz > m * k) a.RangeFail("nnz must be from 0 to m k");
  UndSmallModel small = kUndSmallFitted;
  if (a.Has("undSmall")) {
    const Napi::Value v = info[0].As<Napi::Object>().Get("undSmall");
    if (IsOff(v)) {
      small = UndSmallModel{};
    } else {
      if (!v.IsObject()) a.TypeFail("undSmall must be 'off' or an object {fixedUs, usPerCycle}");
      Napi::Object o = v.As<Napi::Object>();
      const Napi::Value f = o.Get("fixedUs"), c = o.Get("usPerCycle");
      if (!f.IsNumber() || !c.IsNumber()) a.TypeFail("undSmall.fixedUs and undSmall.usPerCycle must be numbers");
      small.fixed_us = f.As<Napi::Number>().DoubleValue(), small.us_per_cycle = c.As<Napi::Number>().DoubleValue();
      if (!(std::isfinite(small.fixed_us) && std::isfinite(small.us_per_cycle) && small.fixed_us >= 0 && small.us_per_cycle > 0))
        a.RangeFail("undSmall.fixedUs must be at least 0 and undSmall.usPerCycle above 0, both finite");
    }
  }
  const UnGemmShape ung = UnGemmPick(m, n, k, sms), und = UndGemmPick(m, n, k, sms);
  Napi::Env env = info.Env();
  const auto shape = [&](const UnGemmShape& s, double cycles) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("nTile", s.n_tile);
    o.Set("split", s.split);
    o.Set("cycles", cycles);
    return o;
  };
  Napi::Object o = Napi::Object::New(env);
  o.Set("ung", shape(ung, UnGemmCycles(m, n, k, ung.n_tile, ung.split, sms)));
  o.Set("und", shape(und, UndGemmCycles(m, n, k, und.n_tile, und.split, sms)));
  o.Set("ungUs", UnGemmUs(m, n, k, ung, sms));
  o.Set("csrUs", CsrUs(nnz, n));
  o.Set("unstGemmWins", UnstGemmWins(m, k, nnz, static_cast<int>(n), sms, ung));
  o.Set("undGemmWins", UndGemmWins(m, k, nnz, n, sms, small));
  if (small.On()) {
    Napi::Object used = Napi::Object::New(env);
    used.Set("fixedUs", small.fixed_us);
    used.Set("usPerCycle", small.us_per_cycle);
    o.Set("undSmall", used);
  } else {
    o.Set("undSmall", env.Null());
  }
  return o;
}

// sp24ToCsr({m, k, values: Uint16Array, meta: Uint32Array}) -> {rowOffsets, columnIndices,
// values}: the nonzeros of 2:4 tiles (zeros left out, columns ascending). Synchronous.
Napi::Value Sp24ToCsrJs(const Napi::CallbackInfo& info) {
  Args a(info, "sp24ToCsr");
  Sp24Tiles t;
  t.m = a.Dim("m"), t.k = a.Dim("k");
  t.strips = (t.m + kSp24TileRows - 1) / kSp24TileRows;
  t.ksteps = (t.k + kSp24TileCols - 1) / kSp24TileCols;
  const int64_t tiles = static_cast<int64_t>(t.strips) * t.ksteps;
  const uint16_t* v = static_cast<const uint16_t*>(a.Array("values", napi_uint16_array, "Uint16Array", tiles * 256));
  const uint32_t* e = static_cast<const uint32_t*>(a.Array("meta", napi_uint32_array, "Uint32Array", tiles * 16));
  t.values.assign(v, v + tiles * 256);
  t.meta.assign(e, e + tiles * 16);
  // Every group's two indices must be distinct and ascending (what mma.sp accepts).
  for (int64_t i = 0; i < tiles * 16; ++i)
    for (int nib = 0; nib < 8; ++nib) {
      const uint32_t x = t.meta[i] >> (4 * nib) & 15u;
      if ((x & 3u) >= (x >> 2)) a.RangeFail("meta word " + std::to_string(i) + " holds indices that are not ascending");
    }
  std::vector<int> offsets, cols;
  std::vector<uint16_t> vals;
  Sp24TilesToCsr(t, &offsets, &cols, &vals);
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("rowOffsets", CopyToJs<Napi::Int32Array>(env, offsets.data(), offsets.size()));
  o.Set("columnIndices", CopyToJs<Napi::Int32Array>(env, cols.data(), cols.size()));
  o.Set("values", CopyToJs<Napi::Uint16Array>(env, vals.data(), vals.size()));
  return o;
}

// sddmmChunkStarts({m, n, rowOffsets, columnIndices}) -> Int32Array: the tensor-core
// SDDMM's chunk starts of a mask (common/tc_tiles.h). Synchronous; pure C++.
Napi::Value SddmmChunkStartsJs(const Napi::CallbackInfo& info) {
  Args a(info, "sddmmChunkStarts");
  const int m = a.Dim("m"), n = a.Dim("n");
  const CsrPattern c = ParseMonotoneCsrPattern(a, m);
  std::vector<int> starts;
  const std::string err = BuildSddmmChunkStarts(m, n, c.row_offsets, c.column_indices, &starts);
  if (!err.empty()) a.RangeFail(err);
  Napi::Int32Array out = Napi::Int32Array::New(info.Env(), starts.size());
  if (!starts.empty()) std::memcpy(out.Data(), starts.data(), 4 * starts.size());
  return out;
}

}  // namespace

void InitFormats(Napi::Env env, Napi::Object exports) {
  ExportFunctions(env, exports,
                  {{"tcFormat", TcFormatJs},
                   {"bitmapFormat", BitmapFormatJs},
                   {"sp24Format", Sp24FormatJs},
                   {"sp24Staged", Sp24StagedJs},
                   {"sp24Runs", Sp24RunsJs},
                   {"streamPlan", StreamPlanJs},
                   {"stream24Wins", Stream24WinsJs},
                   {"stream24Rows", Stream24RowsJs},
                   {"stream24Pad", Stream24PadJs},
                   {"stream24L2Ahead", Stream24L2AheadJs},
                   {"unstStream", UnstStreamJs},
                   {"unstBitmapStream", UnstBitmapStreamJs},
                   {"unstPairStream", UnstPairStreamJs},
                   {"gemm24Rows", Gemm24RowsJs},
                   {"unstGemmPlan", UnstGemmPlanJs},
                   {"sp24ToCsr", Sp24ToCsrJs},
                   {"sddmmChunkStarts", SddmmChunkStartsJs}});
}

}  // namespace binding
}  // namespace sparse
