"""A PyTorch benchmark in the shape of CANDLE's Pilot1/P1B1/p1b1_baseline_pytorch.py (written here): params
from candle.finalize_parameters, a log file named from save_path, the data through p1b1.load_data, the network
from candle's PyTorch builders, CandleCkptPyTorch checkpoints (the loop continues from the epoch restart
returns, as P1B1's should), the epoch lines CANDLE's PyTorch benchmarks print, run() returning nothing."""
import numpy as np
import torch
import torch.nn as nn
import torch.utils.data as data

import candle
import p1b1


def initialize_parameters():
    bmk = p1b1.BenchmarkP1B1(p1b1.file_path, "p1b1_default_model.txt", "pytorch", prog="p1b1_baseline",
                             desc="Train Autoencoder - Pilot 1 Benchmark 1 (shape)")
    return candle.finalize_parameters(bmk)


class P1B1Model(nn.Module):
    def __init__(self, params, input_dim, seed):
        super().__init__()
        self.keras_defaults = candle.keras_default_config()
        activation = candle.build_pytorch_activation(params["activation"])
        self.ly = nn.Sequential()
        previous = input_dim
        for i, width in enumerate(params["dense"] + [params["latent_dim"]] + params["dense"][::-1]):
            self.ly.add_module("dense%d" % i, nn.Linear(previous, width))
            self.ly.add_module("act%d" % i, activation)
            previous = width
        self.ly.add_module("out_dense", nn.Linear(previous, input_dim))
        for layer in self.ly:
            if isinstance(layer, nn.Linear):
                candle.pytorch_initialize(layer.weight, params["initialization"], self.keras_defaults, seed)
                candle.pytorch_initialize(layer.bias, "constant", self.keras_defaults, 0.0)

    def forward(self, x):
        return self.ly(x)


def fit(model, x_train, x_val, params):
    train_iter = data.DataLoader(data.TensorDataset(torch.from_numpy(x_train)), batch_size=params["batch_size"],
                                 shuffle=params["shuffle"])
    x_val = torch.from_numpy(x_val)
    loss_fn = candle.get_pytorch_function(params["loss"])
    optimizer = candle.build_pytorch_optimizer(model, params["optimizer"], params["learning_rate"],
                                               model.keras_defaults)
    ckpt = candle.CandleCkptPyTorch(params)
    ckpt.set_model({"model": model, "optimizer": optimizer})
    J = ckpt.restart(model)
    initial_epoch = J["epoch"] if J is not None else 0
    for epoch in range(initial_epoch, params["epochs"]):
        train_loss = 0.0
        for (x,) in train_iter:
            loss = loss_fn(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
        print("====> Epoch: {} Average loss: {:.4f}".format(epoch, train_loss / len(train_iter.dataset)))
        with torch.no_grad():
            val_loss = loss_fn(model(x_val), x_val).item()
        ckpt.ckpt_epoch(epoch, val_loss)


def run(params):
    args = candle.ArgumentStruct(**params)
    candle.set_seed(args.rng_seed)
    ext = p1b1.extension_from_parameters(params, ".pytorch")
    candle.verify_path(params["save_path"])
    prefix = "{}{}".format(params["save_path"], ext)
    logfile = params["logfile"] if params["logfile"] else prefix + ".log"
    candle.set_up_logger(logfile, p1b1.logger, params["verbose"])
    x_train, y_train, x_val, y_val, x_test, y_test, x_labels, y_labels = p1b1.load_data(params, args.rng_seed)
    p1b1.logger.info("Shape x_train: {}".format(x_train.shape))
    p1b1.logger.info("Range x_train: [{:.3g}, {:.3g}]".format(np.min(x_train), np.max(x_train)))
    model = P1B1Model(params, x_train.shape[1], args.rng_seed)
    fit(model, x_train, x_val, params)


def main():
    run(initialize_parameters())


if __name__ == "__main__":
    main()
