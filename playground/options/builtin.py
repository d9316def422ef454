"""The opts keys the framework itself knows: the original Playground schema plus what this rebuild adds.

Mandatory keys follow the original README ("mandatory non empty" keys must be present and not empty,
"mandatory nullable" keys must be present but may be null or ""), except the keys only the Caffe2 components
need (model_name_py, rendezvous_py, gen_output_py, pretrained_model, memonger, combine_spatial_bn): they are
optional, with defaults that mean what the README's blob gives them (no pretrained weights, no memonger...).
Keys the original crashed on when absent (`num_layer`, `engine`, `additional_override_py`) have defaults here. Keys that only made sense inside
Facebook's data warehouse are listed in `IGNORED_KEYS` and accepted with one info line.
"""
from __future__ import annotations

from playground.options.declaration import NO_DEFAULT, Need, Opt
from playground.options.value_types import (AnyOf, Anything, Bool, Choice, ComponentName, Float, Int, ListOf, Mapping,
                                  Nullable, Record, Str)

SECTIONS = ("input", "model", "model_param", "epoch_iter", "distributed", "output")

# Original internal-only keys: accepted, ignored, reported once.
IGNORED_KEYS = ("input.namespace", "input.table", "input.column_*", "input.*_partition", "input.label_type",
                "temp_var", "temp_var.*")

METRIC = Record("a metric", {
    "name": (Str(), True, NO_DEFAULT),
    "meter_py": (ComponentName("meter"), True, NO_DEFAULT),
    "meter_kargs": (Mapping(), False, {}),
    "is_train": (Bool(), True, NO_DEFAULT),
    "mode": (Nullable(Choice(["min", "max"])), False, None),
})

EARLY_STOPPING = Record("early stopping", {
    "metric": (Str(), True, NO_DEFAULT),
    "mode": (Nullable(Choice(["min", "max"])), False, None),
    "patience": (Int(0), False, 3),
    "min_delta": (Float(0), False, 0.0),
})

PLOT = Record("a plot", {
    "x": (Str(), False, ""),
    "x_title": (Str(), False, ""),
    "ys": (ListOf(Str(), min_items=1), True, NO_DEFAULT),
    "y_title": (Str(), False, ""),
})

M = Need.NON_EMPTY
INERT_NOTE = "Accepted for compatibility with Caffe2 opts; no effect in PyTorch."


INPUTS, NETS, UPDATES = "input components", "forward passes", "update rules and optimizers"


def _o(path, type_, default=NO_DEFAULT, need=Need.OPTIONAL, help="", inert=False, by="framework"):
    return Opt(path=path, type=type_, default=default, need=need, help=help, inert=inert, readers=(by,))


BUILTIN_OPTS: tuple[Opt, ...] = (
    # ---------------------------------------------------------------- input
    _o("input.input_name_py", ComponentName("input"), need=M,
       help="Input component: reads the data and gives each rank its batches. Not needed with model.trial_py."),
    _o("input.train_input_path", Str(), "", help="Training data location (read by the input component).", by=INPUTS),
    _o("input.test_input_path", Str(), "", help="Test data location (read by the input component).", by=INPUTS),
    _o("input.imsize", Int(1), 224, help="Side of the square crop fed to the network, in pixels.", by=INPUTS),
    _o("input.loadsize", Int(1), 256, help="Shorter image side after resizing, before cropping, in pixels.", by=INPUTS),
    _o("input.num_classes", Nullable(Int(1)), None,
       help="Number of classes; null takes it from the dataset when the input component reports it.", by=NETS),
    _o("input.decode_threads", Int(0), 2, help="Data loader worker processes per rank (0 decodes in the trainer)."),
    _o("input.scale_jitter_type", Choice([0, 1]), 0,
       help="Training crop: 0 resize+random crop, 1 Inception-style random area 8-100% and aspect 3/4-4/3.", by=INPUTS),
    _o("input.color_jitter", Bool(), False, help="Random brightness, contrast and saturation in training.", by=INPUTS),
    _o("input.color_lighting", Bool(), False, help="PCA lighting noise (AlexNet-style) in training.", by=INPUTS),
    _o("input.shuffle_train", Bool(), True,
       help="Visit the training set in a new seeded random order each pass (else in stored order)."),
    _o("input.reuse_batch_memory", Bool(), True,
       help="Loader workers write batches into reused shared-memory buffers (much faster for image LMDBs), and "
            "an image LMDB's float batches on the CPU reuse two buffers; a batch's tensors then stay valid until "
            "the loop takes the next batch, so a hook that keeps them longer must clone() them. false: fresh "
            "memory for every batch."),
    _o("input.worker_start_method", Choice(["auto", "fork", "spawn", "forkserver"]), "auto",
       help="How data loader workers start; auto is the platform default (fork on Linux)."),
    _o("input.datasets", ListOf(Anything()), [],
       help="Filled in by the input component's get_input_dataset; kept for original opts blobs."),
    # ---------------------------------------------------------------- model
    _o("model.model_name_py", ComponentName("model"), "",
       help="Model component: init_model and the per-iteration hooks; empty: a train model and a test model "
            "sharing its network (what basic_model does)."),
    _o("model.forward_pass_py", ComponentName("forward_pass"), need=M,
       help="Forward-pass component: the network and its loss. Not needed with model.trial_py."),
    _o("model.parameter_update_py", ComponentName("param_update"), "",
       help="Update-rule component; exactly one of parameter_update_py and optimizer_py is set."),
    _o("model.optimizer_py", ComponentName("optimizer"), "",
       help="Optimizer component (a torch optimizer); exactly one of parameter_update_py and optimizer_py."),
    _o("model.rendezvous_py", ComponentName("rendezvous"), "rendezvous_env",
       help="How ranks find each other when there is more than one process."),
    _o("model.additional_override_py", ComponentName("override"), "",
       help="Module whose functions replace the trainer methods of the same name, for this run only."),
    _o("model.trial_py", ComponentName("trial"), "",
       help="A trial class (registered name or dotted path module.ClassName, docs/trials.md) that builds the model, "
            "data, optimizer and steps; it replaces the input and forward-pass components."),
    _o("model.hooks_py", ListOf(ComponentName("hook")), [],
       help="Hooks added to the training loop, in order: registered names or dotted module paths of modules "
            "defining a playground.api.Hook subclass (docs/hooks.md). Their state is checkpointed."),
    # ---------------------------------------------------------------- model_param
    _o("model_param.pretrained_model", Nullable(Str()), "",
       help="Checkpoint or state_dict file whose weights initialise the network (weights only)."),
    _o("model_param.reset_epoch", Bool(), True,
       help="With pretrained_model: start counting epochs from 0 (else continue from the file's epoch)."),
    _o("model_param.memonger", Bool(), False,
       help="Save activation memory by activation checkpointing, in the networks that read it (below); "
            "others, caffe2_resnet50_default_forward among them, train with full activation memory.", by=NETS),
    _o("model_param.cuda_nccl", Bool(), True, help="Use NCCL between GPU processes (else gloo)."),
    _o("model_param.combine_spatial_bn", Nullable(Bool()), False,
       help="Combine batch-norm statistics across ranks when there is more than one: torch's SyncBatchNorm on "
            "CUDA, per-channel sums over gloo on CPU ranks (as the original did for CPU training)."),
    _o("model_param.max_concurrent_distributed_ops", Nullable(Int(1)), help=INERT_NOTE, inert=True),
    _o("model_param.base_learning_rate", Float(0, exclusive_minimum=True), 0.1,
       help="Learning rate at the start of the schedule (before warm-up and batch scaling).", by=UPDATES),
    _o("model_param.lr_policy", Choice(["fixed", "step", "multistep", "cosine"]), "fixed",
       help="Learning-rate schedule: fixed, step (x lr_gamma every lr_step_epochs), multistep (x lr_gamma at "
            "each epoch listed in lr_step_epochs), cosine (to 0 at num_epochs).", by=UPDATES),
    _o("model_param.lr_step_epochs", AnyOf(Int(1), ListOf(Int(1))), 30,
       help="step: the interval in epochs; multistep: the list of epochs at which the rate is multiplied.", by=UPDATES),
    _o("model_param.lr_gamma", Float(0, exclusive_minimum=True), 0.1, help="Factor of each step decay.", by=UPDATES),
    _o("model_param.warmup_epochs", Float(0), 0.0,
       help="Linear warm-up from 0 over this many (fractional) epochs.", by=UPDATES),
    _o("model_param.lr_scale_by_batch", Bool(), False,
       help="Multiply base_learning_rate by global batch / 256 (linear scaling rule).", by=UPDATES),
    _o("model_param.bn_epsilon", Float(0, exclusive_minimum=True), 1e-5, help="Batch-norm epsilon.", by=NETS),
    _o("model_param.bn_momentum", Float(0, 1, exclusive_maximum=True), 0.9,
       help="Batch-norm momentum in the Caffe2 convention: weight of the old running value (0.9 is PyTorch 0.1).", by=NETS),
    _o("model_param.custom_bn_init", Bool(), False,
       help="Initialise the last batch norm of each residual block to bn_init_gamma.", by=NETS),
    _o("model_param.bn_init_gamma", Float(), 0.0, help="Gamma for custom_bn_init (the original used 1e-323).", by=NETS),
    _o("model_param.weight_decay", Float(0), 1e-4, help="L2 weight decay on weights.", by=UPDATES),
    _o("model_param.weight_decay_bn", Float(0), 0.0, help="L2 weight decay on batch-norm parameters and biases.", by=UPDATES),
    _o("model_param.num_layer", Int(1), 50, help="Network depth, for forward passes that have one.", by=NETS),
    _o("model_param.engine", Str(), "", help='"CUDNN" turns on cuDNN autotuning (benchmark mode).', by=NETS),
    _o("model_param.seed", Int(0), 0,
       help="Seed of every random choice: weights, data order, augmentation, dropout."),
    _o("model_param.deterministic", Bool(), False,
       help="Use deterministic kernels only (torch.use_deterministic_algorithms), for bitwise-repeatable runs."),
    _o("model_param.precision", Choice(["fp32", "bf16", "fp16"]), "fp32",
       help="Training arithmetic: fp32, or autocast to bf16 or fp16 (fp16 with a gradient scaler, checkpointed)."),
    _o("model_param.channels_last", Bool(), False,
       help="Keep 4-d weights and inputs in channels-last memory format (faster convolutions on recent GPUs)."),
    _o("model_param.compile", Bool(), False,
       help="Train through torch.compile(network); weights and checkpoints stay those of the plain network."),
    _o("model_param.grad_accum_steps", Int(1), 1,
       help="Micro-batches of batch_per_device per iteration, gradients summed (DDP syncs only on the last): an "
            "iteration trains batch_per_device x world size x this samples, and an epoch keeps its sample count."),
    _o("model_param.grad_clip_norm", Float(0), 0.0,
       help="Clip the gradients' global L2 norm to this before each step (0: off); the mean norm before clipping "
            "is logged as grad_norm at each record point."),
    _o("model_param.ema_decay", Float(0, 1, exclusive_maximum=True), 0.0,
       help="Keep an exponential moving average of the weights with this decay (0: off), updated after each "
            "step and checkpointed."),
    _o("model_param.ema_warmup", Bool(), True,
       help="With ema_decay: the decay ramps up as min(ema_decay, (1 + n) / (10 + n)) after n updates."),
    _o("model_param.ema_eval", Bool(), False,
       help="With ema_decay: run the test batches of record points with the averaged weights."),
    # ---------------------------------------------------------------- epoch_iter
    _o("epoch_iter.num_train_sample_per_epoch", Int(0), need=M,
       help="Samples per epoch (iterations = this / global batch); 0 means one full pass over the training set."),
    _o("epoch_iter.num_test_sample", Int(0), need=M,
       help="Samples in the end-of-epoch test pass; 0 means all of the test set."),
    _o("epoch_iter.num_epochs", Int(0), need=M, help="Number of epochs."),
    _o("epoch_iter.num_epochs_per_flow_schedule", Int(1), help=INERT_NOTE, inert=True),
    _o("epoch_iter.num_train_iteration_per_test", Int(1), need=M,
       help="A record point (train meters, num_test_iter test batches, throughput) every this many iterations."),
    _o("epoch_iter.batch_per_device", Int(1), need=M, help="Batch size per process; global batch = this x world size."),
    _o("epoch_iter.num_test_iter", Int(0), need=M, help="Test batches per rank at each record point."),
    _o("epoch_iter.test_batch_per_device", Nullable(Int(1)), None,
       help="Test batch size per process; null uses batch_per_device."),
    _o("epoch_iter.record_points_at", Choice(["interval_end", "caffe2"]), "interval_end",
       help="When interval record points fire in an epoch (N = num_train_iteration_per_test): interval_end, after "
            "iterations N-1, 2N-1, ... (each point closes N iterations); caffe2, after iterations 0, N, 2N, ... as "
            "the original (epoch_iter % N == 0), each record's epochs its fract_epoch (epoch + epoch_iter / iterations "
            "per epoch), so plots line up with its runs'."),
    # ---------------------------------------------------------------- distributed
    _o("distributed.num_shards", Int(1), need=M, help="Number of hosts running the same command."),
    _o("distributed.shard_id", Int(0), 0,
       help="This host's index among num_shards (usually given with --shard-id or by the launcher)."),
    _o("distributed.num_gpus", Int(0), need=M,
       help="GPU processes per host; 0 trains on the CPU with num_cpus processes."),
    _o("distributed.first_gpu_id", Int(0), need=M, help="First CUDA device index used on each host."),
    _o("distributed.num_cpus", Int(1), need=M, help="CPU processes per host when num_gpus is 0."),
    _o("distributed.first_cpu_id", Int(0), help=INERT_NOTE, inert=True),
    _o("distributed.num_intra_threads", Nullable(Int(1)), None,
       help="Threads each process uses inside one operation (torch.set_num_threads); null: the environment's "
            "NUM_INTRA_THREADS (CANDLE), else for CPU processes the cores allocated to the command (affinity mask, "
            "SLURM_CPUS_PER_TASK) divided by the processes it starts."),
    _o("distributed.num_inter_threads", Nullable(Int(1)), None,
       help="Threads each process uses to run independent operations (torch.set_num_interop_threads); null: "
            "the environment's NUM_INTER_THREADS (CANDLE), else torch's default."),
    _o("distributed.collective_timeout", Float(0, exclusive_minimum=True), 600.0,
       help="Seconds a collective (or the rendezvous) may wait before every rank gives up with an error."),
    _o("distributed.run_id", Str(), "",
       help="Identifier all hosts of one run agree on (rendezvous key); empty derives it from the scheduler "
            "(SLURM_JOB_ID) or the opts."),
    # ---------------------------------------------------------------- output
    _o("output.gen_output_py", ComponentName("output"), "",
       help="Output component: fun_conclude_operator and assembleAllOutputs; empty: the trainer's own (the result "
            "dict holds the last checkpoint path and the metrics lists)."),
    _o("output.gen_checkpoint_path_py", ComponentName("checkpoint_path"), "",
       help="Component deciding each checkpoint's path; empty uses checkpoint_folder/model_checkpoint_epoch{N}.pt."),
    _o("output.checkpoint_folder", Str(), "",
       help="Where checkpoints go; empty means <run-dir>/checkpoints. A relative path is relative to the working "
            "directory (a sweep's trial: to its run folder)."),
    _o("output.metrics", ListOf(METRIC), [],
       help="Meters to record: name, meter_py, meter_kargs, is_train, and mode (min or max: which way the metric "
            "improves, for best values, ckpt_save_best and early stopping; null: the meter class's "
            "higher_is_better, else min for names with 'loss', 'error', 'mse' or 'mae' and max for others)."),
    _o("output.plots", ListOf(PLOT), [],
       help="Plots drawn at the end: x (a metric, or empty for epochs), x_title, ys (metrics), y_title."),
    _o("output.early_stopping", Nullable(EARLY_STOPPING), None,
       help="Stop training when `metric` has not improved by more than `min_delta` for `patience` consecutive full "
            "test passes (epoch ends; patience 0 stops at the first, as 1 does, as in Keras and Lightning); `mode` "
            "min or max, null: the metric's mode. The state is checkpointed (a "
            "resumed run stops where an uninterrupted one does) and results.json reports it. null: off."),
    _o("output.tensorboard", Bool(), False,
       help="Also write TensorBoard event files to <run-dir>/tensorboard: each record point's values, learning rate, "
            "throughput and gradient norm (needs the tensorboard package)."),
    _o("output.profile_start_iter", Int(0), 5,
       help="With profile_num_iters: the run iteration (counted from 0 over the whole run) the trace starts at."),
    _o("output.profile_num_iters", Int(0), 0,
       help="Trace this many training iterations with torch.profiler (0: off) into <run-dir>/profile (Chrome trace "
            "and TensorBoard files); the top operators are printed in train.log."),
    _o("output.progress", Choice(["auto", "bar", "log", "none"]), "auto",
       help="Terminal progress: a bar on a terminal and log lines otherwise (auto), or forced."),
    _o("output.ckpt_restart_mode", Choice(["off", "auto", "required"]), "auto",
       help="auto: resume from the last good checkpoint when there is one; required: fail when there is none; "
            "off: always start fresh."),
    _o("output.ckpt_save_interval", Int(0), 1,
       help="Save after epoch n (counted from 1) when n % interval == 0, and after the final epoch; 0 saves no "
            "periodic or final checkpoint (best ones still, with ckpt_save_best)."),
    _o("output.ckpt_skip_epochs", Int(0), 0,
       help="Write no checkpoint (and track no best metric) during the first this many epochs; preemption "
            "checkpoints are still written."),
    _o("output.ckpt_keep_limit", Int(1), 1000000,
       help="Checkpoints of this run kept, newest first; older ones are deleted, never the one resumed from, the "
            "best one, the one 'last' names, or files of other runs."),
    _o("output.ckpt_keep_mode", Choice(["linear", "exponential"]), "linear",
       help="Which checkpoints ckpt_keep_limit keeps: linear, the newest ones; exponential, the newest one and, "
            "newest first, one per epoch on a grid that doubles with age (one d epochs older than the newest when "
            "its epoch is a multiple of the largest power of two <= d): about 1, 2, 4, 8... epochs back, two per "
            "doubling; ckpt_keep_limit still caps the count."),
    _o("output.ckpt_save_best", Bool(), True,
       help="Also save whenever ckpt_save_best_metric improves at an epoch end; 'best' points to the best one."),
    _o("output.ckpt_save_best_metric", Str(), "",
       help="Metric for ckpt_save_best; empty uses the first test metric in output.metrics."),
    _o("output.ckpt_save_best_mode", Choice(["auto", "min", "max"]), "auto",
       help="Direction of ckpt_save_best_metric; auto: the metric's mode in output.metrics."),
    _o("output.ckpt_checksum", Bool(), True, help="Store a SHA-256 of each checkpoint and verify it on restart."),
    _o("output.ckpt_metadata", Nullable(Str()), None, help="Free text stored in each checkpoint's info file."),
    _o("output.ckpt_every_n_iters", Int(0), 0, help="Also checkpoint every this many iterations inside an epoch; 0: never."),
)
