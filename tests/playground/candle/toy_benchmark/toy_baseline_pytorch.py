"""A CANDLE PyTorch benchmark written the candle_lib way (as Pilot1/P1B1/p1b1_baseline_pytorch.py):
finalize_parameters reads sys.argv, CandleCkptPyTorch checkpoints and restarts, run() returns nothing."""
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import candle
import toy


def initialize_parameters():
    bmk = toy.BenchmarkToy(toy.file_path, "toy_default_model.txt", "pytorch", prog="toy_baseline",
                           desc="a tiny regression")
    return candle.finalize_parameters(bmk)


def run(params):
    args = candle.ArgumentStruct(**params)
    candle.set_seed(args.rng_seed)
    torch.manual_seed(int(args.rng_seed))
    path = candle.fetch_file(params["data_url"] + params["train_data"], "Toy")
    data = np.loadtxt(path, delimiter=",", dtype=params["data_type"])
    x, y = torch.from_numpy(data[:, :-1]), torch.from_numpy(data[:, -1:])
    if params["noise"]:
        x = x + 0.01 * torch.randn_like(x)

    layers, width = [], x.shape[1]
    for hidden in params["hidden"]:
        layers += [torch.nn.Linear(width, hidden), candle.build_pytorch_activation(params["activation"])]
        width = hidden
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))
    defaults = candle.keras_default_config()
    optimizer = candle.build_pytorch_optimizer(model, params["optimizer"], params["learning_rate"], defaults)
    loss_fn = candle.get_pytorch_function(params["loss"])

    ckpt = candle.CandleCkptPyTorch(params)
    ckpt.set_model({"model": model, "optimizer": optimizer})
    J = ckpt.restart(model)
    initial_epoch = J["epoch"] if J is not None else 0
    loader = DataLoader(TensorDataset(x, y), batch_size=params["batch_size"], shuffle=True)
    for epoch in range(initial_epoch, params["epochs"]):
        total = 0.0
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(xb)
        print("====> Epoch: {} Average loss: {:.4f}".format(epoch, total / len(x)))
        ckpt.ckpt_epoch(epoch, total / len(x))


def main():
    params = initialize_parameters()
    run(params)


if __name__ == "__main__":
    main()
