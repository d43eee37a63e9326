-- wrk script: the rank of a random member of the million-member board.
math.randomseed(os.time())
request = function()
  return wrk.format("GET", string.format("/api/v1/boards/big/members/p%d?period=all", math.random(1, 1000000)))
end
