"""A PyTorch benchmark in the shape of CANDLE's Pilot1/P1B2/p1b2_baseline_pytorch.py (branch pytorch_uq;
written here): Benchmarks' PyTorch names (build_activation, build_optimizer, get_function, convert_to_class), a
log file named from save_path, per-epoch lines at 4 decimals, the test scores printed as a dict, no
checkpoints, run() returning nothing."""
import numpy as np
import torch
import torch.nn as nn
import torch.utils.data as data

import p1b2      # first: it appends Benchmarks' common/ to sys.path, as the real one does
import candle


def initialize_parameters(default_model="p1b2_default_model.txt"):
    bmk = p1b2.BenchmarkP1B2(p1b2.file_path, default_model, "pytorch", prog="p1b2_baseline",
                             desc="Train Classifier - Pilot 1 Benchmark 2 (shape)")
    return candle.finalize_parameters(bmk)


def build_model(params, input_dim, output_dim):
    layers, previous = [], input_dim
    for width in params["dense"]:
        layers += [nn.Linear(previous, width), candle.build_activation(params["activation"])]
        previous = width
    return nn.Sequential(*layers, nn.Linear(previous, output_dim))


def fit(model, x_train, x_val, y_train, y_val, params):
    train_iter = data.DataLoader(data.TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train)),
                                 batch_size=params["batch_size"], shuffle=params["shuffle"])
    val_iter = data.DataLoader(data.TensorDataset(torch.from_numpy(x_val), torch.from_numpy(y_val)),
                               batch_size=params["batch_size"], shuffle=False)
    optimizer = candle.build_optimizer(model, params["optimizer"], params["learning_rate"],
                                       candle.keras_default_config())
    loss_fn = candle.get_function(params["loss"])
    for epoch in range(params["epochs"]):
        train_loss = 0.0
        for x, y in train_iter:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
        print("====> Epoch: {} Average loss: {:.4f}".format(epoch, train_loss / len(train_iter.dataset)))
        model.train(False)
        val_loss = sum(loss_fn(model(x), y).item() for x, y in val_iter)
        print("=> Average validation loss: {:.4f}".format(val_loss / len(val_iter.dataset)))
        model.train(True)
    return model


def run(gParameters):
    ext = p1b2.extension_from_parameters(gParameters, ".torch")
    candle.verify_path(gParameters["save_path"])
    prefix = "{}{}".format(gParameters["save_path"], ext)
    logfile = gParameters["logfile"] if gParameters["logfile"] else prefix + ".log"
    candle.set_up_logger(logfile, p1b2.logger, gParameters["verbose"])
    seed = gParameters["rng_seed"]
    candle.set_seed(seed)
    (x_train, y_train), (x_val, y_val), (x_test, y_test) = p1b2.load_data_one_hot(gParameters, seed)
    p1b2.logger.info("Shape X_train: {}".format(x_train.shape))
    model = build_model(gParameters, x_train.shape[1], y_train.shape[1])
    model = fit(model, x_train, x_val, candle.convert_to_class(y_train), candle.convert_to_class(y_val),
                gParameters)
    model.train(False)
    y_pred = model(torch.from_numpy(x_test)).detach().numpy()
    scores = p1b2.evaluate_accuracy_one_hot(y_pred, y_test)
    print("Evaluation on test data:", scores)


def main():
    run(initialize_parameters())


if __name__ == "__main__":
    main()
