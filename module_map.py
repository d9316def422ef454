"""The component table: public name -> module. The opts name components by these keys.

Add a line to register your own component; or skip this file and write an importable dotted module path
(mypackage.my_component) directly in the opts. `playground components` lists everything registered here.
"""

MODULE_MAP = {
    # inputs (input.input_name_py)
    "synthetic_input": "components.inputs.synthetic_input",
    "gfs_IN1k": "components.inputs.gfs_IN1k",
    "digits_arrays": "components.inputs.digits_arrays",
    # models (model.model_name_py)
    "basic_model": "components.models.basic_model",
    "IN1k_resnet": "components.models.IN1k_resnet",
    "IN1k_resnet_no_test_model": "components.models.IN1k_resnet_no_test_model",
    # forward passes (model.forward_pass_py)
    "mlp_forward": "components.forward_passes.mlp_forward",
    "small_cnn_forward": "components.forward_passes.small_cnn_forward",
    "caffe2_resnet50_default_forward": "components.forward_passes.caffe2_resnet50_default_forward",
    "explicit_resnet_forward": "components.forward_passes.explicit_resnet_forward",
    # parameter updates (model.parameter_update_py)
    "caffe2_resnet50_default_param_update": "components.param_updates.caffe2_resnet50_default_param_update",
    "explicit_resnet_param_update": "components.param_updates.explicit_resnet_param_update",
    # optimizers (model.optimizer_py)
    "sgd_optimizer": "components.optimizers.sgd_optimizer",
    "adamw_optimizer": "components.optimizers.adamw_optimizer",
    # rendezvous (model.rendezvous_py)
    "rendezvous_env": "components.rendezvous.rendezvous_env",
    "rendezvous_filestore": "components.rendezvous.rendezvous_filestore",
    "rendezvous_tcp": "components.rendezvous.rendezvous_tcp",
    # meters (output.metrics[].meter_py)
    "ComputeLoss": "components.meters.compute_loss",
    "ComputeTopKAccuracy": "components.meters.compute_topk_accuracy",
    "ComputeMean": "components.meters.compute_mean",
    # outputs (output.gen_output_py, output.gen_checkpoint_path_py)
    "output_generator": "components.outputs.output_generator",
    "gen_checkpoint_path": "components.outputs.gen_checkpoint_path",
    # overrides (model.additional_override_py)
    "override_no_test_model_no_checkpoint": "components.overrides.override_no_test_model_no_checkpoint",
}
