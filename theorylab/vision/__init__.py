"""The real-image side that either paper's image figures use: small torch networks (a ViT with
positional attention, CNN baselines), their training loop with augmentations, and the image
data sets available without downloads (Fashion-MNIST from Debian's ``dataset-fashion-mnist``,
scikit-learn's digits). It imports the kernel only, never a paper.
"""
