// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IToken {
    function balanceOf(address) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// Uniswap-V2-style constant-product pair (0.3% fee). Tokens at slots 0 and 1, reserves at
/// slots 2 and 3, set in the genesis state; every swap reads and writes both reserves, the
/// hot slots of the `uniswap` workload.
contract Pair {
    address public token0; // slot 0
    address public token1; // slot 1
    uint256 public reserve0; // slot 2
    uint256 public reserve1; // slot 3

    event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to);

    /// Sends the requested output after the input was transferred in; checks x·y ≥ k.
    function swap(uint256 amount0Out, uint256 amount1Out, address to) external {
        require(amount0Out > 0 || amount1Out > 0, "output");
        (uint256 r0, uint256 r1) = (reserve0, reserve1);
        require(amount0Out < r0 && amount1Out < r1, "liquidity");
        if (amount0Out > 0) IToken(token0).transfer(to, amount0Out);
        if (amount1Out > 0) IToken(token1).transfer(to, amount1Out);
        uint256 b0 = IToken(token0).balanceOf(address(this));
        uint256 b1 = IToken(token1).balanceOf(address(this));
        uint256 in0 = b0 > r0 - amount0Out ? b0 - (r0 - amount0Out) : 0;
        uint256 in1 = b1 > r1 - amount1Out ? b1 - (r1 - amount1Out) : 0;
        require(in0 > 0 || in1 > 0, "input");
        require((b0 * 1000 - in0 * 3) * (b1 * 1000 - in1 * 3) >= r0 * r1 * 1_000_000, "k");
        (reserve0, reserve1) = (b0, b1);
        emit Swap(msg.sender, in0, in1, amount0Out, amount1Out, to);
    }
}

/// Router: pulls the input token from the caller into the pair and swaps for the other one.
contract Router {
    function swapExactIn(address pair, bool zeroForOne, uint256 amountIn, uint256 minOut) external returns (uint256 out) {
        Pair p = Pair(pair);
        (uint256 rIn, uint256 rOut) = zeroForOne ? (p.reserve0(), p.reserve1()) : (p.reserve1(), p.reserve0());
        uint256 inWithFee = amountIn * 997;
        out = (inWithFee * rOut) / (rIn * 1000 + inWithFee);
        require(out >= minOut, "slippage");
        IToken(zeroForOne ? p.token0() : p.token1()).transferFrom(msg.sender, pair, amountIn);
        if (zeroForOne) p.swap(0, out, msg.sender);
        else p.swap(out, 0, msg.sender);
    }
}
